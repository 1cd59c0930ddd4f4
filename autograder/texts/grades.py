"""Texts: a student's grade as the TA reads it (the console summary, the class report): the
autograded points and the written answers' points, each said plainly, then the total."""

TEXTS: dict[str, tuple[str, str]] = {
    "grades.total": ("autograded {auto} / {auto_max}, written answers {manual} / {manual_max} entered, "
                     "{score} / {max}",
                     "автоматическая оценка {auto} / {auto_max}, за письменные ответы выставлено {manual} "
                     "/ {manual_max}, итого {score} / {max}"),
    "grades.total_pending": ("autograded {auto} / {auto_max}, written answers not entered yet (up to "
                             "{manual_max}), {score} / {max} so far",
                             "автоматическая оценка {auto} / {auto_max}, письменные ответы ещё не оценены "
                             "(максимум баллов — {manual_max}), итого пока {score} / {max}"),
    "grades.total_partial": ("autograded {auto} / {auto_max}, written answers {manual} entered so far (some not "
                             "entered yet; up to {manual_max}), {score} / {max} so far",
                             "автоматическая оценка {auto} / {auto_max}, за письменные ответы пока выставлено "
                             "{manual} (не все ответы оценены; максимум баллов — {manual_max}), итого пока "
                             "{score} / {max}"),
    "grades.total_autograded": ("autograded {auto} / {auto_max}", "автоматическая оценка {auto} / {auto_max}"),
    "grades.class_autograded": ("mean autograded score {mean} / {max}",
                                "средняя автоматическая оценка {mean} / {max}"),
    "grades.class_entered": (
        "written answers ({tasks}): points entered for {entered} of {count} submissions (in an nbgrader "
        "course, an answer left as released counts 0), mean {mean} / {max}; their totals: mean {total_mean} / "
        "{total_max}",
        "письменные ответы ({tasks}): работ с выставленными баллами — {entered} из {count} (в курсе "
        "nbgrader ответ, оставленный как в шаблоне, считается за 0), среднее {mean} / {max}; итоговая "
        "оценка этих работ: среднее {total_mean} / {total_max}"),
    "grades.class_pending": (
        "written answers ({tasks}; up to {max} points): no points entered yet (formgrader in an nbgrader "
        "course, else manual_points.csv in the results folder)",
        "письменные ответы ({tasks}; максимум баллов — {max}): баллы ещё не выставлены (их вносят в "
        "formgrader, если курс ведётся в nbgrader, иначе в manual_points.csv в папке результатов)"),
}
