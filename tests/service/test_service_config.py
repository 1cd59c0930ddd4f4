"""grader.yml's ``service`` section: typed, documented, unknown keys rejected as everywhere."""
import pytest

from autograder.config import ConfigError, GraderConfig, load_config

from .server import REPO


def config_with(tmp_path, old: str, new: str):
    text = (REPO / "grader.yml").read_text()
    assert old in text
    path = tmp_path / "grader.yml"
    path.write_text(text.replace(old, new, 1))
    return load_config(path)


def test_the_rate_defaults_to_twenty_an_hour(tmp_path):
    assert load_config().service.submissions_per_hour == 20
    assert config_with(tmp_path, "submissions_per_hour: 20", "submissions_per_hour: 5").service.submissions_per_hour == 5
    assert GraderConfig.model_fields["service"].default_factory().submissions_per_hour == 20


def test_a_misspelt_service_key_is_named_with_the_fix(tmp_path):
    with pytest.raises(ConfigError) as raised:
        config_with(tmp_path, "submissions_per_hour: 20", "submission_per_hour: 20")
    assert str(raised.value) == ("grader.yml: service.submission_per_hour: unknown key "
                                 "(did you mean 'submissions_per_hour'?)")


def test_a_rate_of_zero_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="service.submissions_per_hour: input should be greater than 0"):
        config_with(tmp_path, "submissions_per_hour: 20", "submissions_per_hour: 0")
