"""The grade report of a course."""


def build_report(lines):
    """CSV lines 'student,assignment,score,max' -> a table of percentages and letter grades.

    Blank lines and lines starting with '#' are ignored. A malformed line raises ValueError
    naming its line number.
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

    totals = {}
    for name, _assignment, score, max_score in records:
        got, possible = totals.get(name, (0.0, 0.0))
        totals[name] = (got + score, possible + max_score)
    percentages = {name: 100.0 * got / possible for name, (got, possible) in totals.items()}

    rows = []
    for name, percent in sorted(percentages.items(), key=lambda item: (-item[1], item[0])):
        if percent >= 90:
            grade = "A"
        elif percent >= 80:
            grade = "B"
        elif percent >= 70:
            grade = "C"
        elif percent >= 60:
            grade = "D"
        else:
            grade = "F"
        rows.append((name, percent, grade))

    width = max([len("student"), *(len(name) for name, _, _ in rows)])
    out = [f"{'student':<{width}}  {'score':>6}  grade"]
    out.append("-" * len(out[0]))
    for name, percent, grade in rows:
        out.append(f"{name:<{width}}  {percent:>5.1f}%  {grade}")
    if rows:
        mean = sum(percent for _, percent, _ in rows) / len(rows)
        out.append(f"{'mean':<{width}}  {mean:>5.1f}%")
    return "\n".join(out)
