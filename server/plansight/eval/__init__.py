"""`plansight eval`: does planning help? Tasks, checks, attempts through the real server, report.

- `tasks`: the task format (`eval/tasks/<name>/`) and its loader;
- `checks` / `checkfixtures`: running a task's checks on the folder an attempt left;
- `selfcheck`: the tasks checked themselves (reference passes, untouched and half-done fail).
"""
