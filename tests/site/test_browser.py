"""The page in a real headless Chromium (Debian's chromium and chromium-driver, driven over WebDriver), opened
from file:// through its permalink: what it shows agrees with `matrix --json` row by row, it is usable with the
keyboard alone, and it renders (a screenshot). Skipped where the browser is missing, except in CI (CI=true),
where .ci/run installs it and a missing browser fails."""

import os

import pytest

from conftest import comparable, matrix_rows, page_rows, permalink
from webdriver import Browser, find_browser

ROWS = ("return Array.from(document.querySelectorAll('#rows tbody tr')).map(function (tr) {"
        "  var row = {}; Array.from(tr.attributes).forEach(function (a) {"
        "    if (a.name.indexOf('data-') === 0) row[a.name.slice(5).replace(/-/g, '_')] = a.value; });"
        "  row.shown = Array.from(tr.cells).map(function (c) { return c.innerText; }); return row; })")


@pytest.fixture(scope="module")
def browser():
    found = find_browser()
    if None in found:
        message = "chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}: CI must run the browser tests (.ci/run installs them)")
        pytest.skip(message)
    session = Browser(*found)
    yield session
    session.close()


def show(browser, site_dir, fragment: str) -> list[dict]:
    """Open the page at `fragment`; the rows it shows once it has answered."""
    browser.open("about:blank")
    browser.open((site_dir / "index.html").as_uri() + fragment)
    assert browser.wait_for("return document.documentElement.getAttribute('data-answered')"), "no answer shown"
    return browser.script(ROWS)


# (framework flag, GPU as a link names it, OS, driver): every framework, models by their common names and by
# compute capability, a driver of each OS from the page's list
LINKS = [
    ("tf", "GTX 1080 Ti", "linux", ""),
    ("tf", "8.6", "linux", "535.54.03"),
    ("tf", "7.5", "windows", "452.39"),
    ("torch", "RTX 4090", "linux", "525.60.13"),
    ("torch", "3.5", "linux", "470.42.01"),
    ("torch", "RTX 3080", "wsl2", "555.85"),
    ("jax", "H100", "linux", "580.65.06"),
    ("jax", "7.0", "linux", ""),
]
FRAMEWORKS = {"tf": "tensorflow", "torch": "pytorch", "jax": "jax"}


@pytest.mark.parametrize("flag,gpu,os_name,driver", LINKS)
def test_the_page_shows_the_rows_of_matrix_json(browser, site_dir, flag, gpu, os_name, driver):
    framework = FRAMEWORKS[flag]
    shown = show(browser, site_dir, permalink(flag, gpu, os_name, driver))
    expected = matrix_rows(framework, os_name, gpu, driver)
    assert comparable(shown) == comparable(expected)
    for row, cells in zip(expected, (r["shown"] for r in shown)):
        assert cells[0] == row["line"]
        if row["status"] == "impossible":  # every no with its reason
            assert cells[1] == "no" and row["reason"] in cells[-1]
        else:  # every yes with its versions
            assert row["version"] in cells[2] and (row["cuda"] or "none") == cells[4]
    assert browser.script("return document.getElementById('note').hidden"), "a valid link needs no note"


def test_a_known_answer_from_primary_sources(browser, site_dir):
    """TF 1.15 on a GTX 1080 Ti (compute capability 6.1) on Linux: tensorflow-gpu 1.15.5, whose wheels are for
    CPython 3.6-3.7 (package index), CUDA 10.0 (TensorFlow's tested build configurations), which needs driver
    410.48 (NVIDIA's CUDA 10.0 release notes, Table 3)."""
    rows = {r["line"]: r for r in show(browser, site_dir, permalink("tf", "GTX 1080 Ti", "linux"))}
    tf115 = rows["1.15"]
    assert (tf115["status"], tf115["package"], tf115["version"]) == ("native", "tensorflow-gpu", "1.15.5")
    assert (tf115["python"], tf115["cuda"], tf115["driver_min"]) == ("3.6-3.7", "10.0", "410.48")


def test_an_unlisted_driver_is_answered_for_the_listed_one_below_and_says_so(browser, site_dir, site_data):
    listed = site_data["drivers"]["linux"]
    assert "535.104.05" not in listed and "535.54.03" in listed
    shown = show(browser, site_dir, permalink("torch", "8.6", "linux", "535.104.05"))
    assert comparable(shown) == comparable(page_rows(site_data, "pytorch", "linux", "8.6", "535.54.03"))
    note = browser.script("return document.getElementById('note').textContent")
    assert "535.104.05" in note and "535.54.03" in note and "stackresolve matrix --driver 535.104.05" in note


def test_a_bad_link_says_what_is_wrong(browser, site_dir):
    show(browser, site_dir, permalink("tf", "Banana 9000", "linux"))
    note = browser.script("return document.getElementById('note').textContent")
    assert "Banana 9000" in note and "compute capability" in note


def test_the_keyboard_alone_changes_the_answer_and_the_link(browser, site_dir):
    show(browser, site_dir, permalink("tf", "8.6", "linux"))
    browser.script("document.documentElement.removeAttribute('data-answered')")
    browser.keys("#framework", "PyTorch")  # typing into a focused <select> picks the option, as a user does
    assert browser.wait_for("return document.documentElement.getAttribute('data-answered')")
    assert browser.script("return location.hash").startswith("#framework=torch&gpu=8.6")
    frameworks = browser.script("return Array.from(document.querySelectorAll('#rows tbody tr'))"
                                ".map(function (tr) { return tr.dataset.framework; })")
    assert frameworks and set(frameworks) == {"pytorch"}
    # every control has its label, the table its header cells, the answer a live region
    assert browser.script("return Array.from(document.querySelectorAll('select')).every(function (s) {"
                          " return s.labels.length === 1 && s.labels[0].textContent.trim() !== ''; })")
    assert browser.script("return Array.from(document.querySelectorAll('#rows thead th')).every(function (th) {"
                          " return th.scope === 'col'; })")
    assert browser.script("return document.getElementById('summary').getAttribute('aria-live')") == "polite"
    # a plan's details open from the keyboard (a <summary> is focusable and toggles with Enter)
    browser.keys("#rows details summary", "\ue007")
    assert browser.wait_for("return document.querySelector('#rows details[open] pre') !== null")


def test_the_page_renders(browser, site_dir, tmp_path):
    show(browser, site_dir, permalink("torch", "RTX 4090", "linux", "535.54.03"))
    picture = browser.screenshot()
    assert picture.startswith(b"\x89PNG") and len(picture) > 10_000
    (tmp_path / "site.png").write_bytes(picture)
    first = browser.script("return document.documentElement.getAttribute('data-first-answer-ms')")
    assert first is not None and float(first) > 0
