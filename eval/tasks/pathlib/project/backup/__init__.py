"""Copy the files of a folder tree into a backup folder."""
