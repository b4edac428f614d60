"""--format powershell: native Windows install scripts (TF <= 2.10) and the WSL2 route (TF >= 2.11 GPU).

PowerShell is not available here (no Debian package), so the scripts are checked structurally: every string and
here-string is closed and braces/parentheses balance (a small scanner that knows PowerShell's quoting rules), and
the plan's values appear exactly where the script uses them. Expected values come from the sources: TensorFlow's
Windows tested builds (2.3: CUDA 10.1, cuDNN 7.6; 1.15: CUDA 10.0), NVIDIA's CUDA release notes (driver >= 418.96
for CUDA 10.1 on Windows), NVIDIA's installer names, TensorFlow's install docs (msvcp140_1.dll since 2.1).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from plan_reading import requirement_lines
from stackresolve.formats import powershell_render as powershell
from stackresolve.knowledge.fields import KnowledgeError
from stackresolve.knowledge.install_facts import parse_windows
from stackresolve.knowledge.loader import constraints_dir, knowledge
from stackresolve.resolve import resolve
from stackresolve.request.parse import Flags, request_from_flags


def render_powershell(resolution, kb, **options):
    """The powershell plan as `stackresolve plan --format powershell` prints it."""
    from stackresolve.formats.render import render_plan
    from stackresolve.formats import PlanOptions

    return render_plan("powershell", resolution, kb, PlanOptions(**options))


SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"


def windows_doc() -> dict:
    return tomllib.loads((Path(constraints_dir()) / "windows.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def facts():
    return parse_windows(windows_doc())



def script(kb, **flags):
    resolution = resolve(kb, request_from_flags(kb, Flags(**flags), None))
    return resolution, render_powershell(resolution, kb)


# -- a small PowerShell structure check -----------------------------------------------------------------------
def ps_structure_problems(text: str) -> list[str]:
    """Unclosed strings / here-strings and unbalanced (), {}, [] outside strings and comments.

    Rules followed: '...' strings double their quotes (any of PowerShell's four single-quote characters); "..."
    strings escape with a backtick or a doubled quote; here-strings open with @' or @" at the end of a line and
    close with '@ or "@ at the start of a line; # starts a comment outside strings (<# #> is not used by us).
    """
    problems: list[str] = []
    stack: list[tuple[str, int]] = []
    pairs = {")": "(", "}": "{", "]": "["}
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c == "@" and i + 1 < n and text[i + 1] in SINGLE_QUOTES + '"' and text[i + 2:i + 3] == "\n":
            closer = ("\n'@" if text[i + 1] != '"' else '\n"@')
            end = text.find(closer, i + 2)
            if text[i + 1] != '"':
                ends = [text.find("\n" + q + "@", i + 2) for q in SINGLE_QUOTES]
                ends = [e for e in ends if e >= 0]
                end = min(ends) if ends else -1
            if end < 0:
                problems.append(f"line {line}: here-string never closed")
                return problems
            line += text.count("\n", i, end + 3)
            i = end + 3
        elif c in SINGLE_QUOTES:
            j = i + 1
            while True:
                if j >= n:
                    problems.append(f"line {line}: single-quoted string never closed")
                    return problems
                if text[j] in SINGLE_QUOTES:
                    if j + 1 < n and text[j + 1] in SINGLE_QUOTES:
                        j += 2
                        continue
                    break
                j += 1
            line += text.count("\n", i, j)
            i = j + 1
        elif c == '"':
            j = i + 1
            while True:
                if j >= n:
                    problems.append(f"line {line}: double-quoted string never closed")
                    return problems
                if text[j] == "`":
                    j += 2
                    continue
                if text[j] == '"':
                    if j + 1 < n and text[j + 1] == '"':
                        j += 2
                        continue
                    break
                j += 1
            line += text.count("\n", i, j)
            i = j + 1
        elif c == "`":
            i += 2
        elif c in "({[":
            stack.append((c, line))
            i += 1
        elif c in ")}]":
            if not stack or stack[-1][0] != pairs[c]:
                problems.append(f"line {line}: unmatched {c}")
            else:
                stack.pop()
            i += 1
        else:
            i += 1
    problems += [f"line {where}: {opener} never closed" for opener, where in stack]
    return problems


# Variables PowerShell itself provides (about_Automatic_Variables, about_Preference_Variables) that our scripts read.
AUTOMATIC_VARIABLES = {"true", "false", "null", "_", "LASTEXITCODE", "ErrorActionPreference", "ProgressPreference",
                       "PSScriptRoot", "args", "Matches", "matches", "HOME"}


def unset_variables(text: str) -> list[str]:
    """Variables a script reads but never sets: with Set-StrictMode -Version Latest, reading one is an error, even
    inside a string (about_Set-StrictMode: 'Prohibits references to uninitialized variables')."""
    code = re.sub(r"@'\n.*?\n'@", "''", text, flags=re.S)  # a here-string's body is data
    code = "\n".join(l for l in code.splitlines() if not l.lstrip().startswith("#"))
    assigned = (set(re.findall(r"\$(\w+)\s*=(?!=)", code)) | set(re.findall(r"\]\s*\$(\w+)", code))
                | set(re.findall(r"foreach\s*\(\s*\$(\w+)\s+in", code, re.I)))
    read = set(re.findall(r"\$\{?([A-Za-z_]\w*)(?![\w:])", code))  # $env:X is the environment, not a variable
    return sorted(read - assigned - AUTOMATIC_VARIABLES)


@pytest.mark.parametrize("flags", [
    dict(tf="2.3", os="windows", gpu="GTX 1080"),  # system CUDA and cuDNN
    dict(tf="2.3", os="windows", cpu=True),
    dict(torch="2.5", os="windows", gpu_cc="8.6"),  # CUDA inside the wheels: only a driver check
    dict(torch="1.8", os="windows", gpu_cc="7.5"),
    dict(jax="latest", os="windows", cpu=True),
    dict(jax="latest", os="windows", gpu_cc="8.6"),  # the WSL2 route
    dict(tf="2.15", os="windows", gpu_cc="8.6"),
])
def test_every_variable_a_script_reads_is_set(kb, flags):
    _, text = script(kb, **flags)
    assert "Set-StrictMode -Version Latest" in text
    assert unset_variables(text) == []


def test_the_unset_variable_check_finds_one():
    assert unset_variables("Set-StrictMode -Version Latest\n$a = 1\nWrite-Host \"$a $b\"\n") == ["b"]


def variable(text: str, name: str) -> str:
    found = re.findall(rf"^\${name} = (.*)$", text, re.MULTILINE)
    assert len(found) == 1, (name, found)
    return found[0]


def ps_literal(text: str) -> str:
    """The value of a PowerShell single-quoted literal (quotes undoubled)."""
    assert text[0] in SINGLE_QUOTES and text[-1] in SINGLE_QUOTES, text
    return re.sub(f"([{SINGLE_QUOTES}])\\1", r"\1", text[1:-1])


def here_string_body(text: str, name: str) -> list[str]:
    match = re.search(rf"^\${name} = @'\n(.*?)\n'@$", text, re.MULTILINE | re.DOTALL)
    assert match, name
    return match.group(1).split("\n")


# -- the checker itself ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad", [
    "$x = 'open",
    "$x = @'\nbody\n",
    "if ($a) { Write-Host 'x'",
    'Write-Host "a`"',
])
def test_structure_check_finds_broken_scripts(bad):
    assert ps_structure_problems(bad)


def test_structure_check_accepts_quoting_rules():
    good = "$a = 'it''s'\n$b = \"say `\"hi`\" and \"\"x\"\"\"\n$c = @'\n{ ( '\n'@\n# } comment\nif ($a) { $b }\n"
    assert ps_structure_problems(good) == []


# -- quoting --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hostile", [
    "'; Remove-Item -Recurse C:\\; '",
    "\u2019; Start-Process calc; \u2018",
    "$(Stop-Computer)",
    "`\"; evil",
])
def test_ps_quote_keeps_hostile_values_inert(hostile):
    line = f"$Value = {powershell.ps_quote(hostile)}\n"
    assert ps_structure_problems(line) == []
    # The literal is one single-quoted token spanning the rest of the line.
    assert line.startswith("$Value = '") and line.rstrip("\n")[-1] in SINGLE_QUOTES


def test_ps_quote_rejects_newlines():
    with pytest.raises(ValueError):
        powershell.ps_quote("a\nb")


def test_here_string_cannot_be_closed_early():
    with pytest.raises(ValueError):
        powershell.here_string(["tensorflow==2.3.4", "'@", "Remove-Item C:\\"])


# -- the data -------------------------------------------------------------------------------------------------
def test_windows_data_covers_the_cuda_lines_of_tensorflows_windows_builds(facts):
    installers, zips, runtimes = facts
    assert {"9.0", "10.0", "10.1", "11.0", "11.2"} <= {i.version for i in installers}
    by_release = {i.release: i for i in installers}
    assert by_release["10.1.243"].url.endswith("/cuda_10.1.243_426.00_win10.exe")
    assert by_release["11.2.2"].url.endswith("/cuda_11.2.2_461.33_win10.exe")
    assert all(c.endswith("_11.2") for c in by_release["11.2.2"].components)
    assert all(r.source.strip() for r in (*installers, *zips, *runtimes))


def test_windows_data_agrees_with_tensorflows_windows_table(facts):
    base = knowledge()
    installers = {i.version for i in facts[0]}
    for build in base.tested_builds:
        if build.os == "windows" and build.gpu and Version(build.version) >= Version("1.13"):
            assert build.cuda in installers, build


def test_msvc_requirement_follows_tensorflows_docs(facts):
    runtimes = facts[2]
    newer = next(r for r in runtimes if r.applies_to("2.3.4"))
    older = next(r for r in runtimes if r.applies_to("1.15.5"))
    assert newer.dll == "msvcp140_1.dll" and older.dll == "msvcp140.dll"
    assert newer.registry == "HKLM:\\SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64"
    assert newer.download_url.startswith("https://aka.ms/")


def test_cudnn_zips_say_when_a_login_is_needed(facts):
    zips = {(z.version, z.cuda): z for z in facts[1]}
    assert zips[("7.6.5", "10.1")].login_required is True
    assert zips[("8.9.7", "11.x")].login_required is False
    assert zips[("8.9.7", "11.x")].fits("11.2") and not zips[("7.6.5", "10.1")].fits("10.0")


def test_parser_rejects_an_injected_url():
    doc = windows_doc()
    doc["cuda_installer"][0] = {**doc["cuda_installer"][0], "url": "https://x.example/a.exe'; calc; '"}
    with pytest.raises(KnowledgeError):
        parse_windows(doc)


# -- native scripts -------------------------------------------------------------------------------------------
def test_tf_2_3_native_windows_script(kb):
    resolution, text = script(kb, tf="2.3", os="windows", gpu="GTX 1080")
    stack = resolution.stack
    assert ps_structure_problems(text) == []
    assert text.startswith("# stackresolve powershell plan\n")
    assert "Set-StrictMode -Version Latest" in text and "$ErrorActionPreference = 'Stop'" in text
    # CUDA: TensorFlow 2.3's Windows build uses CUDA 10.1; the installer is 10.1 update 2 (10.1.243).
    assert variable(text, "CudaVersion") == "'10.1'"
    assert variable(text, "CudaRelease") == "'10.1.243'"
    assert "cuda_10.1.243_426.00_win10.exe" in variable(text, "CudaInstallerUrl")
    assert "'cudart_10.1'" in variable(text, "CudaComponents")
    assert "(@('-s') + $CudaComponents)" in text
    # Driver check against the stack's minimum, reading both nvidia-smi labels.
    assert variable(text, "MinDriver") == f"'{stack.driver.minimum}'"
    assert stack.driver.minimum == "418.96"  # NVIDIA's table: CUDA 10.1.105 needs >= 418.96 on Windows
    assert "(?:Driver|KMD) Version" in text and "--query-gpu=driver_version" in text
    # PATH: CUDA bin, libnvvp, CUPTI and the cuDNN bin folder, plus CUDA_PATH.
    assert "NVIDIA GPU Computing Toolkit\\CUDA\\v$CudaVersion" in text
    bin_dirs = variable(text, "CudaBinDirs")
    assert "'bin'" in bin_dirs and "'libnvvp'" in bin_dirs and "'extras\\CUPTI\\lib64'" in bin_dirs
    assert "Add-UserPath $CudnnBin" in text
    assert "SetEnvironmentVariable('CUDA_PATH', $cudaRoot, 'User')" in text
    # cuDNN 7.x built for CUDA 10.1, from NVIDIA's archive (login needed).
    assert variable(text, "CudnnZipFile").startswith("'cudnn-10.1-windows10-x64-v7.")
    assert variable(text, "CudnnLoginRequired") == "$true"
    # MSVC runtime, venv via the py launcher, pip plan, GPU check.
    assert variable(text, "MsvcDll") == "'msvcp140_1.dll'"
    assert "HKLM:\\SOFTWARE\\Microsoft\\VisualStudio\\14.0\\VC\\Runtimes\\x64" in text
    assert variable(text, "PythonVersion") == f"'{stack.python.recommended}'"
    assert '& py "-$PythonVersion" -m venv $VenvDir' in text
    assert here_string_body(text, "Requirements") == requirement_lines(resolution)
    assert "tf.config.list_physical_devices('GPU')" in ps_literal(variable(text, "CheckCode"))


def test_tf_1_15_native_windows_script(kb):
    resolution, text = script(kb, tf="1.15", os="windows", gpu="GTX 1080")
    assert ps_structure_problems(text) == []
    assert variable(text, "CudaVersion") == "'10.0'"
    assert variable(text, "MsvcDll") == "'msvcp140.dll'"
    assert "tf.test.is_gpu_available()" in ps_literal(variable(text, "CheckCode"))


def test_tf_2_10_native_windows_script_uses_cuda_11_2(kb):
    resolution, text = script(kb, tf="2.10", os="windows", gpu="RTX 3090")
    assert ps_structure_problems(text) == []
    assert variable(text, "CudaVersion") == "'11.2'"
    assert "'cudart_11.2'" in variable(text, "CudaComponents")


def test_cpu_windows_script_skips_cuda(kb):
    resolution, text = script(kb, tf="2.3", os="windows", cpu=True)
    assert ps_structure_problems(text) == []
    assert variable(text, "HasCuda") == "$false"
    # the CUDA values are set, empty (StrictMode), and nothing is downloaded
    assert variable(text, "CudaVersion") == "''" and variable(text, "CudaInstallerUrl") == "''"
    assert variable(text, "CudnnZipUrl") == "''"
    assert variable(text, "CheckCode") == "'import tensorflow as tf; print(tf.__version__)'"


# -- the WSL2 route ---------------------------------------------------------------------------------------------
def test_tf_2_15_on_windows_gets_the_wsl2_route(kb):
    resolution, text = script(kb, tf="2.15", os="windows", gpu="RTX 3090")
    assert ps_structure_problems(text) == []
    assert "TensorFlow 2.10 was the last release with GPU support on native Windows" in text
    assert variable(text, "Distro") == "'Ubuntu-22.04'"
    assert "& wsl.exe --install -d $Distro" in text
    linux = "\n".join(here_string_body(text, "LinuxScript"))
    assert "set -euo pipefail" in linux
    assert re.search(r"'tensorflow\[and-cuda\]==2\.15\.\d+'", linux)
    assert "tf.config.list_physical_devices('GPU')" in linux
    assert "CudaInstallerUrl" not in text  # no native CUDA install on this route


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_linux_part_of_the_wsl2_route_is_valid_bash(kb, tmp_path):
    _, text = script(kb, tf="2.15", os="windows", gpu="RTX 3090")
    path = tmp_path / "plan.sh"
    path.write_text("\n".join(here_string_body(text, "LinuxScript")) + "\n", encoding="utf-8")
    result = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr


def test_wsl2_stack_gets_the_wsl2_route(kb):
    resolution, text = script(kb, tf="2.15", os="wsl2", gpu="RTX 3090")
    assert resolution.stack is not None
    assert ps_structure_problems(text) == []
    assert "wsl.exe --install" in text
    assert variable(text, "MinDriver") == f"'{resolution.stack.driver.minimum}'"


def test_linux_stack_is_refused_with_a_clear_message(kb):
    from stackresolve.formats.render import FormatRefused

    with pytest.raises(FormatRefused, match="PowerShell plans are for Windows"):
        script(kb, tf="2.3", os="linux", gpu="GTX 1080")


def test_every_native_windows_line_gets_a_well_formed_script(kb):
    """Each release line with a native Windows GPU build: the script parses structurally and installs that CUDA."""
    checked = 0
    for line in kb.lines:
        if not line.gpu_package_windows or kb.tested_build(line.version, "windows", True) is None:
            continue
        resolution, text = script(kb, tf=line.version, os="windows", gpu="GTX 1080")
        assert ps_structure_problems(text) == [], line.version
        if resolution.stack is None or not resolution.stack.cuda:
            continue
        assert ps_literal(variable(text, "CudaVersion")) == resolution.stack.cuda.version
        assert ps_literal(variable(text, "MinDriver")) == resolution.stack.driver.minimum
        checked += 1
    assert checked >= 3


# -- issue 32: the usage line names the file -o wrote; the user PATH keeps its %VARIABLE% entries ----------------
def cli(*args):
    from click.testing import CliRunner

    from stackresolve.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


TF_23 = ("plan", "--no-detect", "--tf", "2.3", "--os", "windows", "--gpu", "GTX 1080", "--format", "powershell")


def usage(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("# Run from PowerShell", "# Written as"))]


def test_the_usage_line_runs_the_file_o_wrote(tmp_path):
    target = tmp_path / "install.ps1"
    assert cli(*TF_23, "-o", target).exit_code == 0
    assert usage(target.read_text()) == [
        "# Run from PowerShell: powershell -ExecutionPolicy Bypass -File .\\install.ps1"]
    # printed: the name the script suggests saving it under
    printed = cli(*TF_23)
    assert usage(printed.stdout) == [
        "# Run from PowerShell: powershell -ExecutionPolicy Bypass -File .\\install-tf-2.3.4.ps1"]


def test_a_name_powershell_will_not_run_is_named_with_the_rename(tmp_path):
    # powershell.exe -File runs .ps1 files only (about_PowerShell_exe, -File; saltstack/salt#34201)
    target = tmp_path / "plan for lab.txt"
    assert cli(*TF_23, "-o", target).exit_code == 0
    assert usage(target.read_text()) == [
        "# Written as plan for lab.txt: rename it to install-tf-2.3.4.ps1 first (powershell -File runs only .ps1 "
        "files)",
        "# Run from PowerShell: powershell -ExecutionPolicy Bypass -File .\\install-tf-2.3.4.ps1"]
    quoted = tmp_path / "it's mine.ps1"
    assert cli(*TF_23, "-o", quoted).exit_code == 0
    [line] = usage(quoted.read_text())
    assert line.endswith("-File '.\\it''s mine.ps1'")  # one PowerShell literal: the name as it is
    assert ps_structure_problems(quoted.read_text()) == []


def test_each_fleet_script_names_its_own_file(tmp_path):
    inventory = tmp_path / "fleet.toml"
    # an RTX 4090 on the Windows driver 572.70 (tests/fixtures/detect/smi-banner-wsl2-570.124.06-driver-572.70.txt)
    inventory.write_text('[[machine]]\nname = "win"\ngpu = "RTX 4090"\ndriver = "572.70"\nos = "windows"\n')
    out = tmp_path / "out"
    assert cli("plan", "--fleet", inventory, "--torch", "latest", "-o", out).exit_code == 0
    assert usage((out / "stack-1.ps1").read_text()) == [
        "# Run from PowerShell: powershell -ExecutionPolicy Bypass -File .\\stack-1.ps1"]


def test_the_user_path_is_rewritten_with_its_variables_and_kind_kept(kb):
    """HKCU\\Environment's Path is read unexpanded and written back as REG_EXPAND_SZ (or REG_SZ where it was):
    RegistryKey.GetValue(name, default, RegistryValueOptions.DoNotExpandEnvironmentNames) and
    SetValue(name, value, RegistryValueKind) (learn.microsoft.com/dotnet/api/microsoft.win32.registrykey.getvalue,
    .../microsoft.win32.registryvalueoptions). [Environment]::GetEnvironmentVariable('Path', 'User') returns it
    expanded and SetEnvironmentVariable writes a plain string, REG_SZ (dotnet/runtime
    System.Private.CoreLib Environment.Win32.cs, SetEnvironmentVariableFromRegistry: registryKey.SetValue(variable,
    value)): %USERPROFILE%\\bin would become a fixed path."""
    _, text = script(kb, tf="2.3", os="windows", gpu="GTX 1080")
    assert ps_structure_problems(text) == [] and unset_variables(text) == []
    function = text[text.index("function Add-UserPath"):text.index("function Test-Administrator")]
    assert "SetEnvironmentVariable('Path'" not in text and "GetEnvironmentVariable('Path'" not in text
    assert "[Microsoft.Win32.Registry]::CurrentUser.CreateSubKey('Environment')" in function
    assert ("$key.GetValue('Path', '', [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)"
            in function)
    assert "$kind = [Microsoft.Win32.RegistryValueKind]::ExpandString" in function
    assert "$key.GetValueKind('Path') -eq [Microsoft.Win32.RegistryValueKind]::String" in function
    assert "$key.SetValue('Path', ((@($Directory) + $parts) -join ';'), $kind)" in function
    # an entry written as a variable counts as the folder it names: no second copy
    assert "[Environment]::ExpandEnvironmentVariables($_).TrimEnd('\\') -ieq $normalized" in function
    # CUDA_PATH after the PATH: its WM_SETTINGCHANGE broadcast makes new terminals read both
    assert text.index("Add-UserPath $CudnnBin\n") < text.index("SetEnvironmentVariable('CUDA_PATH', $cudaRoot, 'User')")
