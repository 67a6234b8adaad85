"""The grade report of a course."""

GRADES = ((90, "A"), (80, "B"), (70, "C"), (60, "D"))


def parse_scores(lines):
    """CSV lines 'student,assignment,score,max' -> (name, assignment, score, max) tuples.

    Blank lines and '#' comments are skipped; a malformed line raises ValueError naming it.
    """
    records = []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = [part.strip() for part in line.split(",")]
        if len(parts) != 4:
            raise ValueError(f"line {number}: expected 4 fields, got {len(parts)}")
        name, assignment, score_text, max_text = parts
        try:
            score = float(score_text)
            max_score = float(max_text)
        except ValueError:
            raise ValueError(f"line {number}: score and max must be numbers") from None
        if max_score <= 0 or not 0 <= score <= max_score:
            raise ValueError(f"line {number}: score {score_text} out of 0..{max_text}")
        records.append((name, assignment, score, max_score))
    return records


def student_percentages(records):
    """Each student's total score as a percentage of their total possible score."""
    totals = {}
    for name, _assignment, score, max_score in records:
        got, possible = totals.get(name, (0.0, 0.0))
        totals[name] = (got + score, possible + max_score)
    return {name: 100.0 * got / possible for name, (got, possible) in totals.items()}


def letter_grade(percent):
    """A from 90, B from 80, C from 70, D from 60, else F."""
    for floor, grade in GRADES:
        if percent >= floor:
            return grade
    return "F"


def format_report(percentages):
    """The table: best first (ties by name), each with its grade, then the mean."""
    rows = sorted(percentages.items(), key=lambda item: (-item[1], item[0]))
    width = max([len("student"), *(len(name) for name, _ in rows)])
    out = [f"{'student':<{width}}  {'score':>6}  grade"]
    out.append("-" * len(out[0]))
    for name, percent in rows:
        out.append(f"{name:<{width}}  {percent:>5.1f}%  {letter_grade(percent)}")
    if rows:
        mean = sum(percent for _, percent in rows) / len(rows)
        out.append(f"{'mean':<{width}}  {mean:>5.1f}%")
    return "\n".join(out)


def build_report(lines):
    """CSV lines 'student,assignment,score,max' -> a table of percentages and letter grades.

    Blank lines and lines starting with '#' are ignored. A malformed line raises ValueError
    naming its line number.
    """
    return format_report(student_percentages(parse_scores(lines)))
