"""`plansight eval`: does planning help, and which part? Tasks, checks, attempts through the real
server, report.

- `tasks`: the task format (`eval/tasks/<name>/`) and its loader;
- `checks` / `checkfixtures`: running a task's checks on the folder an attempt left;
- `selfcheck`: the tasks checked themselves (reference passes, untouched and half-done fail);
- `arms`: the arms, each the server's initialization options;
- `meter` / `plancost`: what passed between the server and the API, and what planning cost;
- `stats`: the intervals, and the attempts a difference needs.
"""
