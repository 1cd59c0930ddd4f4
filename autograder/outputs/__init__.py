"""The results folder, one owner: ``store`` opens it and writes each result, its feedback and
grades.csv; ``solutions`` keeps each student's solution cells; ``manual_points`` reads the TA's
points for written answers; ``totals`` puts a student's total together, once, for every writer."""
