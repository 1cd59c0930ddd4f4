"""``autograder tokens`` and the tokens the service reads: fresh random tokens, one per student,
never overwritten, read back as digests; every usage error is one line, exit 2."""
import csv
import os
import stat

import pytest
from typer.testing import CliRunner

from autograder.cli import app
from autograder.config import ConfigError
from autograder.service.tokens import MIN_TOKEN_CHARS, Tokens, read_ids

runner = CliRunner()


def tokens(*args: str):
    return runner.invoke(app, ["tokens", *args])


def rows(path) -> list[list[str]]:
    return list(csv.reader(path.open()))


def test_each_student_gets_a_fresh_token_in_a_private_file(tmp_path):
    """Does ``tokens`` write student_id,token rows, each token of at least 128 random bits and
    all different, into a file only its owner can read?"""
    out = tmp_path / "tokens.csv"
    done = tokens("s1", "s2", "с,запятой", "--output", str(out))
    assert done.exit_code == 0, done.output
    written = rows(out)
    assert written[0] == ["student_id", "token"]
    assert [r[0] for r in written[1:]] == ["s1", "s2", "с,запятой"]
    assert all(len(token) >= 32 for _, token in written[1:])   # 24 bytes of base64url: 192 bits
    assert len({token for _, token in written[1:]}) == 3
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600


def test_an_existing_file_is_never_overwritten(tmp_path):
    """Is a second ``tokens`` into the same file refused (exit 2, one line), the file unchanged?"""
    out = tmp_path / "tokens.csv"
    tokens("s1", "--output", str(out))
    before = out.read_bytes()
    again = tokens("s1", "s2", "--output", str(out))
    assert again.exit_code == 2
    assert "already exists" in again.output and "never overwritten" in again.output
    assert out.read_bytes() == before


def test_ids_come_from_a_list_or_from_nbgraders_roster(tmp_path):
    """Does ``--from`` read one id a line (blank lines skipped) and nbgrader's roster CSV (its
    id column), besides ids given as arguments?"""
    plain = tmp_path / "ids.txt"
    plain.write_text("a1\n\n  a2  \r\na3\n")
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nb1,Ann,Lee,a@x\nb2,Bo,\"Kim, Jr\",b@x\n")
    assert read_ids(plain) == ["a1", "a2", "a3"]
    assert read_ids(roster) == ["b1", "b2"]
    out = tmp_path / "tokens.csv"
    assert tokens("z0", "--from", str(roster), "--output", str(out)).exit_code == 0
    assert [r[0] for r in rows(out)[1:]] == ["z0", "b1", "b2"]


@pytest.mark.parametrize("args, said", [
    ([], "no student ids"),
    (["s1", "s1"], "more than once: 's1'"),
    (["bad\nid"], "control character"),
    (["--from", "/nonexistent/ids.txt"], "cannot read"),
], ids=["none", "twice", "newline", "missing file"])
def test_usage_errors_are_one_line_and_write_nothing(tmp_path, args, said):
    out = tmp_path / "tokens.csv"
    done = tokens(*args, "--output", str(out))
    assert done.exit_code == 2 and said in done.output, done.output
    assert not out.exists()


def test_the_service_knows_a_token_only_by_its_digest(tmp_path):
    """Does ``Tokens`` find the student of a token, and nobody for another, a prefix, an empty
    token or another student's token with a character changed, keeping no token itself?"""
    out = tmp_path / "tokens.csv"
    tokens("s1", "s2", "--output", str(out))
    (_, t1), (_, t2) = rows(out)[1:]
    known = Tokens.load(out)
    assert known.student_of(t1) == "s1" and known.student_of(t2) == "s2"
    changed = t1[:-1] + ("A" if t1[-1] != "A" else "B")   # one character off
    assert {known.student_of(guess) for guess in ("", t1[:-1], t1 + "x", changed, t1 + "\n")} == {None}
    assert t1 not in repr(vars(known)) and t1.encode() not in b"".join(vars(known)["_digests"].values())


@pytest.mark.parametrize("content, said", [
    ("id,token\ns1,{long}\n", "first row must be student_id,token"),
    ("student_id,token\ns1,short\n", f"at least {MIN_TOKEN_CHARS} characters"),
    ("student_id,token\ns1,{long}\ns1,{other}\n", "student 's1' appears twice"),
    ("student_id,token\ns1,{long}\ns2,{long}\n", "a token appears twice"),
    ("student_id,token\n", "no students"),
], ids=["header", "short token", "student twice", "token twice", "empty"])
def test_a_tokens_file_the_service_cannot_trust_is_a_usage_error(tmp_path, content, said):
    path = tmp_path / "tokens.csv"
    path.write_text(content.format(long="x" * 32, other="y" * 32))
    with pytest.raises(ConfigError, match=said):
        Tokens.load(path)


def test_a_name_holding_a_line_separator_makes_no_student(tmp_path):
    """Red team 13: `tokens --from` split an nbgrader roster with str.splitlines, so a name holding
    U+2028 or U+0085 ended its row there and made tokens for students who do not exist. Is the
    roster read as CSV, and an id holding one refused?"""
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email\nb1,Ann\u2028c1,Lee\x85d1,a@x\nb2,\"Bo\nKim\",K\u2029,b@x\n",
                      encoding="utf-8")
    assert read_ids(roster) == ["b1", "b2"]
    plain = tmp_path / "ids.txt"
    plain.write_text("a1\na2\u2028a3\n", encoding="utf-8")
    assert read_ids(plain) == ["a1", "a2\u2028a3"]
    done = tokens("--from", str(plain), "--output", str(tmp_path / "tokens.csv"))
    assert done.exit_code == 2 and "control character" in done.output and not (tmp_path / "tokens.csv").exists()
