"""Does the docs site build cleanly, offline, with every link inside it resolving, and is its
reference the code's own? One build per session, fresh (``-E``), as ``make docs`` does it."""
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q", "-b", "html",
                            str(DOCS), str(out)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, f"the docs do not build cleanly:\n{built.stdout[-3000:]}{built.stderr[-5000:]}"
    return out


class _Page(HTMLParser):
    """Every id on a page, and every address it refers to (links, images, scripts, styles)."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []   # (tag, address)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name) is not None:
                self.links.append((tag, attrs[name]))


def _read(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def test_builds_with_warnings_as_errors(site):
    """Does the site build with -W and nitpicky references (every role's target found)?"""
    assert (site / "index.html").exists()


def test_every_internal_link_and_anchor_resolves(site):
    """Does every link, image, script and style sheet inside the site reach a file that exists,
    and every #anchor an id on that page?"""
    pages = {path: _read(path) for path in site.rglob("*.html")}
    broken = []
    for path, page in pages.items():
        for tag, address in page.links:
            parts = urlsplit(address)
            if parts.scheme or address.startswith("//"):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: <{tag}> {address}: no such file")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _read(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(site)}: <{tag}> {address}: no such anchor")
    assert not broken, "\n".join(broken)


def test_loads_nothing_from_the_network(site):
    """Does every page load its theme, fonts and scripts from the site itself (offline)?"""
    outside = []
    for path in site.rglob("*.html"):
        outside += [f"{path.relative_to(site)}: <{tag}> {address}" for tag, address in _read(path).links
                    if tag != "a" and (urlsplit(address).scheme or address.startswith("//"))]
    for path in site.rglob("*.css"):
        outside += [f"{path.relative_to(site)}: {url}" for url in re.findall(r"url\(\s*['\"]?((?:https?:)?//[^)'\"]+)",
                                                                              path.read_text(errors="replace"))]
        outside += [f"{path.relative_to(site)}: @import {url}" for url in re.findall(r"@import\s+['\"]?(https?://\S+)",
                                                                                     path.read_text(errors="replace"))]
    assert not outside, "\n".join(outside)


def test_the_cli_reference_has_every_option(site):
    """Is every verb, argument and option of the CLI's own parser on the CLI page?"""
    import typer.main

    from autograder.cli import app

    ids = _read(site / "reference" / "cli.html").ids
    missing = []
    for name, command in typer.main.get_command(app).commands.items():
        missing += [f"autograder {name}"] if f"cli-{name}" not in ids else []
        for param in command.params:
            anchors = ([f"{opt.lstrip('-')}" for opt in param.opts] if param.param_type_name == "option"
                       else [f"arg-{param.name.upper()}"])
            missing += [f"autograder {name} {a}" for a in anchors if f"cmdoption-autograder-{name}-{a}" not in ids]
    assert not missing, f"not on the CLI page: {missing}"


def test_the_grader_yml_reference_has_every_key(site):
    """Is every key of the config model on the grader.yml page, with its default?"""
    from autograder.config import GraderConfig, SandboxConfig, ServiceConfig

    page = _read(site / "reference" / "grader-yml.html")
    keys = [*(k for k in GraderConfig.model_fields if k not in ("sandbox", "service")), *(f"sandbox.{k}" for k in SandboxConfig.model_fields),
            *(f"service.{k}" for k in ServiceConfig.model_fields)]
    missing = [key for key in keys if f"confval-{key}" not in page.ids]
    assert not missing, f"not on the grader.yml page: {missing}"
    text = (site / "reference" / "grader-yml.html").read_text(encoding="utf-8")
    assert "3072" in text and "submissions one student may hand in" in text


def test_the_result_reference_has_every_field_written(site):
    """Does the result page list the fields of a result's JSON as the store writes it?"""
    from autograder.results import CheckResult, SubmissionResult, TaskResult
    from autograder.outputs.store import _KEPT_APART

    text = (site / "reference" / "result-json.html").read_text(encoding="utf-8")
    for model in (SubmissionResult, TaskResult, CheckResult):
        for key in model.model_fields:
            kept_apart = _KEPT_APART.get(key) is True or key in ("seconds", "again_on_cpu")
            assert (f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{key}</span></code></p></td>"
                    in text) != kept_apart, f"{model.__name__}.{key}"


def test_the_project_stands_alone(site):
    """Do the README and the docs point at nothing outside the repository's own files (the
    contract's file, the shared folder), and does no page cite the contract by section?"""
    sources = [REPO / "README.md", *DOCS.rglob("*.md"), *DOCS.rglob("*.py")]
    found = [f"{path.relative_to(REPO)}: {word}" for path in sources for word in ("SPEC.md", "/shared")
             if word in path.read_text(encoding="utf-8")]
    found += [f"{path.relative_to(site)}: SPEC" for path in site.rglob("*.html")
              if "SPEC" in path.read_text(encoding="utf-8")]
    assert not found, found


def test_the_readme_is_one_screen_and_its_links_resolve():
    """Is the README under 150 lines, and does each of its links reach a file of the repo?"""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 150
    targets = re.findall(r"\]\(([^)\s]+)\)|src=\"([^\"]+)\"", text)
    local = [a or b for a, b in targets if not urlsplit(a or b).scheme]
    assert local, "the README links into the docs"
    missing = [t for t in local if not (REPO / unquote(urlsplit(t).path)).exists()]
    assert not missing, missing


def test_files_and_modules_named_in_the_docs_exist():
    """Does every repository path (`autograder/...`, `tests/...`, ...) and every dotted module
    (`autograder.x.y`) that the README and the docs name still exist, after files move?"""
    roots = "autograder|reference|tests|scripts|docs|benchmarks|assignments|examples|student_template"
    missing = []
    for page in [REPO / "README.md", *DOCS.rglob("*.md")]:
        text = page.read_text(encoding="utf-8")
        for path in re.findall(rf"`((?:{roots})/[^`\s<*]*)`", text):
            if not (REPO / path.rstrip("/")).exists():
                missing.append(f"{page.relative_to(REPO)}: {path}")
        for dotted in re.findall(r"`(autograder(?:\.\w+)+)", text):
            if not _resolves(dotted):
                missing.append(f"{page.relative_to(REPO)}: {dotted}")
    assert not missing, missing


def _resolves(dotted: str) -> bool:
    """Is ``a.b.c`` a module, or an attribute of the longest module it starts with?"""
    import importlib

    parts = dotted.split(".")
    for depth in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:depth]))
        except ImportError:
            continue
        for name in parts[depth:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False
