"""grader.yml: every mistake is one readable line naming the file, the key and the fix."""
from pathlib import Path

import pytest

from autograder.config import ConfigError, load_config

REPO = Path(__file__).resolve().parents[2]


def error_for(tmp_path: Path, old: str, new: str) -> str:
    text = (REPO / "grader.yml").read_text()
    assert old in text
    path = tmp_path / "grader.yml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    return str(raised.value)


def test_the_repository_config_is_valid():
    assert load_config().assignment("bahdanau").points("seq2seq_attention_decoder") == 4.0


def test_unknown_key_gets_a_suggestion(tmp_path):
    assert error_for(tmp_path, "cell_timeout_s", "cell_timout_s") == (
        "grader.yml: sandbox.cell_timout_s: unknown key (did you mean 'cell_timeout_s'?)")


def test_wrong_type_is_named(tmp_path):
    message = error_for(tmp_path, "memory_mb: 3072", "memory_mb: lots")
    assert message.startswith("grader.yml: sandbox.memory_mb: ") and "integer" in message


def test_unknown_check_gets_a_suggestion(tmp_path):
    message = error_for(tmp_path, "zero weight beyond valid length:", "zero weight beyond valid lenght:")
    assert "unknown check (did you mean 'zero weight beyond valid length'?)" in message
    assert "missing check 'zero weight beyond valid length'" in message


def test_points_must_match_the_notebook(tmp_path):
    message = error_for(tmp_path, "plain softmax when valid_lens is None: 0.25",
                        "plain softmax when valid_lens is None: 1.25")
    assert message == ("grader.yml: assignments.attention_scoring.tasks.masked_softmax: points add up to 4 "
                       "but the notebook's cell 'masked_softmax_tests' gives 3; make them agree")


def test_bad_language_is_named(tmp_path):
    assert "language" in error_for(tmp_path, "language: en", "language: fr")


def test_missing_file_says_how_to_fix(tmp_path):
    with pytest.raises(ConfigError, match="cannot read .* pass --config PATH"):
        load_config(tmp_path / "nope.yml")


def test_invalid_yaml_is_one_line(tmp_path):
    path = tmp_path / "grader.yml"
    path.write_text("language: [en\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(path)
