"""Reference pages generated from the code, so that they cannot drift from it.

Three directives, each reading the object the grader itself uses:

- ``autograder-cli``: every command of ``autograder.cli:app`` (typer's own parser), with its
  usage, help, arguments and options, as ``program``/``option`` entries (``{option}`` links
  to them are checked by the build);
- ``grader-yml``: every key of ``grader.yml`` from the config model
  (``autograder.config.GraderConfig``): its type, default and help, as ``confval`` entries;
- ``result-json``: the result's JSON from its model (``autograder.results.SubmissionResult``),
  object by object: each field's type, its value when unset, and the comment on its line. Every
  field is always written.
"""
import inspect
import json
import re
import types
import typing

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes


class _Generated(SphinxDirective):
    """A directive whose body is reStructuredText made by ``lines()``."""

    def lines(self) -> list[str]:
        raise NotImplementedError

    def run(self) -> list[nodes.Node]:
        lines = self.lines()
        source = StringList(lines, source=f"<{self.name} generated from the code>")
        parsed = nested_parse_to_nodes(self.state, source, allow_section_headings=True)
        pending = self.env.temp_data.setdefault("generated_labels", [])
        pending += [(line[4:-1], lines[at + 2].strip("`")) for at, line in enumerate(lines)
                    if line.startswith(".. _") and line.endswith(":")]
        return parsed


# --- the command line ------------------------------------------------------------------------

def _usage(name: str, command) -> str:
    words = ["autograder", name, "[OPTIONS]"]
    for param in command.params:
        if param.param_type_name != "argument":
            continue
        word = param.name.upper() + ("..." if param.nargs == -1 else "")
        words.append(word if param.required else f"[{word}]")
    return " ".join(words)


def _option_line(param, ctx) -> str:
    names = ", ".join(param.opts + param.secondary_opts)
    if getattr(param, "is_flag", False):
        return names
    metavar = param.display_type(ctx).strip("<>").split("[")[-1].rstrip("]").upper()
    return f"{names} <{metavar}>"


def _option_body(param) -> list[str]:
    facts = []
    if param.required:
        facts.append("required")
    if param.multiple:
        facts.append("repeatable")
    if param.default not in (None, False) and not param.required:
        facts.append(f"default: ``{param.default}``")
    help_text = (param.help or "").rstrip(".")
    return [f"   {help_text}" + (f" ({'; '.join(facts)})" if facts else "") + "."]


class AutograderCli(_Generated):
    """Every command of the ``autograder`` CLI, from the CLI's own parser."""

    def lines(self) -> list[str]:
        import typer._click as click
        import typer.main

        from autograder.cli import app

        group = typer.main.get_command(app)
        lines = []
        for name, command in group.commands.items():
            ctx = click.Context(command, info_name=name, parent=click.Context(group, info_name="autograder"))
            title = f"``autograder {name}``"
            lines += [f".. _cli-{name}:", "", title, "-" * len(title), "",
                      "::", "", f"   {_usage(name, command)}", "",
                      *inspect.cleandoc(command.help or "").splitlines(), "",
                      f".. program:: autograder {name}", ""]
            for param in command.params:
                if param.hidden:
                    continue
                if param.param_type_name == "argument":
                    lines += [f".. option:: {param.name.upper()}", "", *_option_body(param), ""]
                else:
                    lines += [f".. option:: {_option_line(param, ctx)}", "", *_option_body(param), ""]
        return lines


# --- grader.yml ------------------------------------------------------------------------------

def _public(text: str) -> str:
    """The code's docstrings cite the course's contract by section ("SPEC §3"): the docs say
    the same in their own words, so such asides are left out here."""
    return re.sub(r"\s*\((?:[^()]*)SPEC §[^()]*\)", "", text)


def _type_name(annotation, metadata=()) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return " | ".join(str(arg) for arg in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in typing.get_args(annotation))
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"mapping of {_type_name(key)} to {_type_name(value)}"
    if annotation is type(None):
        return "null"
    metadata = (*metadata, *getattr(annotation, "__metadata__", ()))
    base = typing.get_args(annotation)[0] if hasattr(annotation, "__metadata__") else annotation
    names = {int: "integer", float: "number", str: "text", bool: "true or false"}
    name = names.get(base, getattr(base, "__name__", str(base)))
    positive = any(getattr(m, "gt", None) == 0 for m in metadata)
    return f"positive {name}" if positive else name


def _default(field) -> str | None:
    from pydantic_core import PydanticUndefined
    if field.default is PydanticUndefined:
        return None
    return "null" if field.default is None else str(field.default)


def _confval(key: str, field, type_name: str | None = None, description: str | None = None) -> list[str]:
    lines = [f".. confval:: {key}", f"   :type: {type_name or _type_name(field.annotation, field.metadata)}"]
    default = _default(field)
    lines.append(f"   :default: ``{default}``" if default is not None else "   :default: (required)")
    return lines + ["", f"   {_public(description or field.description or '').rstrip('.')}.", ""]


class GraderYml(_Generated):
    """Every key of grader.yml, from the config model."""

    def lines(self) -> list[str]:
        from autograder.config import AssignmentConfig, GraderConfig, ManualTask, SandboxConfig, ServiceConfig

        nested = {"sandbox": SandboxConfig, "service": ServiceConfig}
        lines = []
        for key, field in GraderConfig.model_fields.items():
            if key in nested:
                title = f"``{key}``"
                lines += [title, "-" * len(title), "",
                          *_public(inspect.cleandoc(nested[key].__doc__ or "")).splitlines(), ""]
                for sub, subfield in nested[key].model_fields.items():
                    lines += _confval(f"{key}.{sub}", subfield)
            elif key == "assignments":
                lines += ["``assignments``", "-" * 15, ""]
                lines += _confval("assignments", field, "mapping of assignment name to an assignment",
                                  "one entry per assignment, under its name (``attention_scoring``, ``bahdanau``)")
                for sub, subfield in AssignmentConfig.model_fields.items():
                    lines += _confval(f"assignments.<name>.{sub}", subfield,
                                      "mapping of task id to {check name: points} or {manual: points}"
                                      if sub == "tasks" else None)
                lines += _confval("assignments.<name>.tasks.<task>.manual", ManualTask.model_fields["manual"])
            else:
                if not lines:
                    lines += ["Top level", "---------", ""]
                lines += _confval(key, field)
        return lines


# --- the result's JSON -----------------------------------------------------------------------

def _comments(model) -> dict[str, str]:
    """The comment on each field's line of the model's source (its help, as in limits.py)."""
    source = inspect.getsource(model)
    return dict(re.findall(r"^\s+(\w+):[^#\n]*#\s*(.+)$", source, re.MULTILINE))


def _json_type(schema: dict) -> str:
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[-1]}`_"
    if "anyOf" in schema:
        return " or ".join(_json_type(option) for option in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {_json_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema:
        return f"object of {_json_type(schema['additionalProperties'])}"
    return {"null": "null", "string": "text", "number": "number", "integer": "integer",
            "boolean": "true or false", "object": "object"}.get(kind, kind)


def _kept_apart() -> dict[str, set[str]]:
    """The fields the store writes beside the result, not in ``<student_id>.json`` (timings,
    the kept solution cells), per model: read from the store's own exclusion, so that a field
    moved in or out of the JSON moves here too."""
    from autograder.results import CheckResult, SubmissionResult, TaskResult
    from autograder.outputs.store import _KEPT_APART as kept

    def names(spec) -> set[str]:
        return {key for key, value in (spec.items() if isinstance(spec, dict) else ((k, True) for k in spec))
                if value is True}

    tasks = kept.get("tasks", {}).get("__all__", {})
    return {SubmissionResult.__name__: names(kept), TaskResult.__name__: names(tasks),
            CheckResult.__name__: names(tasks.get("checks", {}).get("__all__", {}))}


class ResultJson(_Generated):
    """The result's JSON (``<student_id>.json``), from its model and its schema."""

    def lines(self) -> list[str]:
        from autograder import results

        apart = _kept_apart()
        schema = results.SubmissionResult.model_json_schema()
        definitions = {"SubmissionResult": schema, **schema.get("$defs", {})}
        for name, definition in definitions.items():
            if "description" in definition:
                definition["description"] = _public(definition["description"])
            for key in apart.get(name, ()):
                definition["properties"].pop(key, None)
                definition["required"] = [k for k in definition.get("required", []) if k != key]
        lines = []
        for name, definition in definitions.items():
            comments = _comments(getattr(results, name))
            doc = _public(inspect.cleandoc(getattr(results, name).__doc__ or "")).splitlines()
            lines += [f".. _result-json-{name.lower()}:", "", name, "-" * len(name), "", *doc, "",
                      ".. list-table::", "   :header-rows: 1", "   :widths: 20 25 15 40", "",
                      "   * - key", "     - type", "     - when unset", "     - what"]
            for key, prop in definition.get("properties", {}).items():
                unset = f"``{json.dumps(prop['default'])}``" if "default" in prop else ""
                lines += [f"   * - ``{key}``", f"     - {_json_type(prop)}", f"     - {unset or ' '}",
                          f"     - {_public(comments.get(key, '')) or ' '}"]
            lines.append("")
        lines += ["The JSON Schema", "---------------", "",
                  "The same, as JSON Schema (the model's ``model_json_schema()``, less the fields kept "
                  "beside the result):", "",
                  ".. code-block:: json", "",
                  *("   " + line for line in json.dumps(schema, indent=2, ensure_ascii=False).splitlines()), ""]
        return lines


def _note_labels(app, doctree) -> None:
    """Sphinx's own scan of a page's labels sees only the first one that a directive here made
    (MyST parses eval-rst apart): note the others, after that scan, so that {ref} finds them."""
    std = app.env.domains.standard_domain
    for label, title in app.env.temp_data.pop("generated_labels", []):
        if label not in std.labels:
            std.note_hyperlink_target(label, app.env.docname, label, title)


def setup(app):
    app.connect("doctree-read", _note_labels)
    app.add_directive("autograder-cli", AutograderCli)
    app.add_directive("grader-yml", GraderYml)
    app.add_directive("result-json", ResultJson)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
