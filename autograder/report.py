"""Rendering results for people: check messages, the per-student feedback, grades.csv.

Imports no torch: everything here is text.
"""
import csv
import io

LABELS = {
    "en": {"checked": "checked", "input": "smallest failing input", "expected": "expected",
           "got": "got", "where": "where", "mistake": "likely mistake",
           "title": "Feedback", "score": "score", "warnings": "Warnings", "errors": "Errors",
           "manual": "graded by your TA", "seed": "hypothesis seed"},
    "ru": {"checked": "проверялось", "input": "наименьший входной пример", "expected": "ожидалось",
           "got": "получено", "where": "где", "mistake": "вероятная ошибка",
           "title": "Отзыв", "score": "баллы", "warnings": "Предупреждения", "errors": "Ошибки",
           "manual": "оценивает преподаватель", "seed": "seed hypothesis"},
}


def render_finding(what: tuple[str, str], finding, language: str) -> str:
    """A failed check: verdict first, then the input, expected vs got, and one hint."""
    ru = language == "ru"
    label = LABELS[language]
    lines = [finding.problem[ru], f"{label['checked']}: {what[ru]}"]
    if finding.case_code:
        lines += [f"{label['input']}:", *("    " + line for line in finding.case_code.splitlines())]
    if finding.expected is not None:
        lines.append(f"{label['expected']}: {finding.expected}")
    if finding.got is not None:
        lines.append(f"{label['got']}: {finding.got}")
    if finding.difference:
        lines.append(f"{label['where']}: {finding.difference[ru]}")
    if finding.mistake is not None:
        lines.append(f"{label['mistake']}: {finding.mistake.text[ru]}")
    return "\n".join(lines)


def feedback_markdown(result: dict, language: str) -> str:
    """The student's feedback file: score, then each task's failed checks in full."""
    label = LABELS[language]
    lines = [f"# {label['title']}: {result['student_id']} / {result['assignment']}", "",
             f"**{label['score']}: {result['score']:g} / {result['max_score']:g}** "
             f"({label['seed']}: {result.get('seed')})", ""]
    for task in result["tasks"]:
        if task["score"] is None:
            lines += [f"## {task['id']}: {label['manual']} (/{task['max_score']:g})", ""]
            continue
        lines += [f"## {task['id']}: {task['score']:g} / {task['max_score']:g}", ""]
        for check in task["checks"]:
            mark = "✔" if check["passed"] else "✘"
            lines.append(f"- {mark} {check['name']} ({check['score']:g}/{check['max_score']:g})")
            if check["message"]:
                lines += ["", "```text", check["message"], "```", ""]
        lines.append("")
    for key in ("warnings", "errors"):
        if result[key]:
            lines += [f"## {label[key]}", ""]
            lines += [f"- `{item['code']}`{' (' + item['task'] + ')' if item['task'] else ''}: {item['message']}"
                      for item in result[key]]
            lines.append("")
    return "\n".join(lines)


def grades_csv(results: list[dict], task_ids: list[str]) -> str:
    """grades.csv: student_id, assignment, score, max_score, then one column per task."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["student_id", "assignment", "score", "max_score", *task_ids])
    for result in sorted(results, key=lambda r: r["student_id"]):
        scores = {task["id"]: task["score"] for task in result["tasks"]}
        writer.writerow([result["student_id"], result["assignment"], result["score"], result["max_score"],
                         *("" if scores.get(t) is None else scores[t] for t in task_ids)])
    return out.getvalue()


def render_task_text(task: dict, language: str) -> str:
    """One task's checks as plain text (the nbgrader test cell's output)."""
    lines = [f"{task['id']}: {task['score']:g} / {task['max_score']:g}"]
    for check in task["checks"]:
        lines.append(f"{'PASS' if check['passed'] else 'FAIL'} {check['name']}")
        lines += ["    " + line for line in check["message"].splitlines()]
    return "\n".join(lines)
