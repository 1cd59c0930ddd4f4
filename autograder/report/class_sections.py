"""The class report's two flags for the TA, as HTML: the shared unknown mistakes and the similar
solutions (SPEC §6). The numbers come from ``class_stats`` (``unexplained``, ``similarity``);
this module only lays them out. The Markdown report's are in ``class_markdown``.
"""
from collections import defaultdict

from ..files import visible
from ..results import Finding, text
from .similarity import FLAG, Pair
from .class_markdown import LISTED_PAIRS, SIMILARITY_CSV, UNEXPLAINED_CSV
from .class_stats import ClassStats
from ..pages.markup import code_block, esc, ident, number, say, table
from ..pages.student import check_title
from .unexplained import Group

SIDE_BY_SIDE = 3      # a task's most alike cells shown side by side; the other pairs listed


def _h2(label: str, language: str, anchor: str) -> str:
    return f'<h2 id="{anchor}">{say(text(label), language)}</h2>'


def unexplained(stats: ClassStats, language: str) -> str:
    """Each shared group (two students or more) in full, under its task and check; the failures
    seen in one student each folded away in one table (unexplained.csv has them all)."""
    explain = say(text("page.report.unexplained_explained", file=UNEXPLAINED_CSV), language)
    parts = [_h2("page.report.unexplained", language, "unexplained"), f'<p class="explain">{explain}</p>']
    if not stats.unexplained:
        return "".join(parts) + f"<p>{say(text('page.report.no_unexplained'), language)}</p>"
    places: dict[tuple[str, str], list[Group]] = defaultdict(list)
    for group in stats.unexplained:
        if len(group.students) > 1:
            places[(group.task, group.check)].append(group)
    for (task, check), groups in places.items():
        parts.append(f"<h3>{ident(task)}: {check_title(check, language)}</h3>")
        parts += [_group(group, language) for group in groups]
    single = [group for group in stats.unexplained if len(group.students) == 1]
    if single:
        rows = [[f"{ident(g.task)}: {check_title(g.check, language)}", str(g.number), ident(g.students[0])]
                for g in single]
        headers = [say(text("term.check"), language), say(text("page.report.group", number=""), language).strip(),
                   say(text("page.student"), language)]
        more = say(text("page.report.single_groups", count=len(single)), language)
        parts.append(f"<details><summary>{more}</summary>{table(headers, rows, (58, 14, 28))}</details>")
    return "".join(parts)


def _group(group: Group, language: str) -> str:
    head = (f'{say(text("page.report.group", number=group.number), language)} · '
            f'{say(text("page.report.group_size", count=len(group.students)), language)}')
    students = ", ".join(ident(s) for s in group.students)
    detail = _example(group.finding, language) if group.finding is not None else code_block(group.message)
    return f'<article class="check"><h4>{head}</h4>{detail}<p><small>{students}</small></p></article>'


def _example(finding: Finding, language: str) -> str:
    """What the group's students share: the problem, the example, what was expected and got."""
    rows = [("feedback.input", code_block(finding.case_code))] if finding.case_code else []
    for label, value in (("feedback.expected", finding.expected), ("feedback.got", finding.got)):
        if value is not None:
            rows.append((label, code_block(value) if isinstance(value, str) else say(value, language)))
    items = "".join(f"<dt>{say(text(label), language)}</dt><dd>{value}</dd>" for label, value in rows)
    return f'<p class="problem">{say(finding.problem, language)}</p><dl>{items}</dl>'


def similar(stats: ClassStats, language: str) -> str:
    explain = say(text("page.report.similar_explained", flag=number(FLAG, language), file=SIMILARITY_CSV),
                  language)
    parts = [_h2("page.report.similar", language, "similar"), f'<p class="explain">{explain}</p>']
    if not stats.similar:
        parts.append(f"<p>{say(text('page.report.no_similar'), language)}</p>")
    tasks: dict[str, list[Pair]] = defaultdict(list)
    for pair in stats.similar:
        tasks[pair.task].append(pair)
    headers = [say(text("page.report.pair"), language), say(text("page.report.similarity"), language)]
    for task, pairs in tasks.items():
        alike = _alike_cells(pairs)
        parts.append(f"<h3>{ident(task)}</h3>")
        parts += [_side_by_side(pair, holders, language) for pair, holders in alike[:SIDE_BY_SIDE]]
        shown = {frozenset((p.code_a, p.code_b)) for p, _ in alike[:SIDE_BY_SIDE]}
        rest = [p for p in pairs if frozenset((p.code_a, p.code_b)) not in shown]
        rows = [[f"{ident(p.student_a)} · {ident(p.student_b)}", number(p.similarity, language)]
                for p in rest[:LISTED_PAIRS]]
        if rows:
            more = say(text("page.report.more_pairs", count=len(rest), task=task), language)
            parts.append(f"<details><summary>{more}</summary>{table(headers, rows, (75, 25), numeric={1})}</details>")
    if stats.not_compared:
        note = text("page.report.not_compared", count=len(stats.not_compared),
                    students=", ".join(map(visible, stats.not_compared)))
        parts.append(f'<p class="explain">{say(note, language)}</p>')
    return "".join(parts)


def _alike_cells(pairs: list[Pair]) -> list[tuple[Pair, dict[str, list[str]]]]:
    """The pairs that compare the same two cells, once: the first (most alike) of them, and for
    each of its cells the students who handed it in (five students with one cell are one entry,
    not ten pairs)."""
    found: dict[frozenset, tuple[Pair, dict[str, list[str]]]] = {}
    for pair in pairs:
        _, holders = found.setdefault(frozenset((pair.code_a, pair.code_b)), (pair, {}))
        for student, code in ((pair.student_a, pair.code_a), (pair.student_b, pair.code_b)):
            if student not in holders.setdefault(code, []):
                holders[code].append(student)
    return list(found.values())


def _side_by_side(pair: Pair, holders: dict[str, list[str]], language: str) -> str:
    """The two cells side by side (one cell, when the students handed in the same one)."""
    similarity = f"{say(text('page.report.similarity'), language)} {number(pair.similarity, language)}"
    sides = [(pair.code_a, pair.marks_a), (pair.code_b, pair.marks_b)][:1 if pair.code_a == pair.code_b else 2]
    names = [", ".join(ident(s) for s in sorted(holders[code])) for code, _ in sides]
    if len(sides) == 1:
        same = say(text("page.report.same_cell", count=len(holders[pair.code_a])), language)
        head = f"{names[0]} — {same}, {similarity}"
    else:
        head = f"{names[0]} · {names[1]} — {similarity}"
    labels = names if len(sides) == 2 else [""]  # one cell: its students are in the heading
    cells = "".join(f"<div>{f'<p><small>{label}</small></p>' if label else ''}"
                    f"<pre><code>{_marked(code, marks)}</code></pre></div>"
                    for label, (code, marks) in zip(labels, sides))
    return f'<article class="flag"><h4>{head}</h4><div class="pair">{cells}</div></article>'


def _marked(code: str, marks: tuple[tuple[int, int], ...]) -> str:
    """``code`` escaped, each line that the other cell mostly shares in ``<mark>`` (copydetect's
    spans end mid-token, where its filtered code maps back to the cell, and run over comments,
    which it drops; whole lines of code read better). One sweep over the lines and the merged
    spans: a span is passed once, not once per line (red team 13: lines x marks took 12 s per
    pair of 60 KB cells)."""
    shown, at, spans, first = [], 0, _merged(marks), 0
    for line in code.split("\n"):
        indent = len(line) - len(line.lstrip())
        start, end = at + indent, at + len(line)
        at += len(line) + 1
        while first < len(spans) and spans[first][1] <= start:
            first += 1
        shared, index = 0, first
        while index < len(spans) and spans[index][0] < end:
            shared += min(spans[index][1], end) - max(spans[index][0], start)
            index += 1
        if line.strip() and not line.lstrip().startswith("#") and 2 * shared >= end - start:
            shown.append(f"{esc(line[:indent])}<mark>{esc(line[indent:])}</mark>")
        else:
            shown.append(esc(line))
    return "\n".join(shown).strip("\n")


def _merged(marks: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    """The spans sorted, overlapping ones joined: no two share a character."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(marks):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        elif start < end:
            merged.append((start, end))
    return merged
