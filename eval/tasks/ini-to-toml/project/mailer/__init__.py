"""Send notification mails."""
