"""`--format powershell`: a Windows PowerShell script that installs the stack.

Native Windows (TensorFlow <= 2.10 GPU, or CPU): driver check, CUDA installer (silent, only the components
TensorFlow loads), cuDNN zip, CUDA_PATH and user PATH entries, Visual C++ runtime check, a venv made with the
`py` launcher, the pip plan, and a one-line GPU check. For WSL2 stacks (and Windows GPU requests TensorFlow no longer
serves natively) it emits the WSL2 route: install Ubuntu in WSL, run the Linux pip plan there.

Every value from the plan is either checked against a strict pattern or written as a PowerShell single-quoted
string (quotes doubled), so nothing from the request can break out of the script; the static script text uses
only these variables.
"""

from __future__ import annotations

import re
import shlex

from stackresolve.formats.script import one_line, requirement_lines, safe_header
from stackresolve.model.enums import Delivery, Framework
from stackresolve.formats import environment_name
from stackresolve.formats.powershell_decide import NATIVE_GPU_END_SOURCE, WindowsNativePlan, WslPlan

WSL_DISTRO = "Ubuntu-22.04"
WSL_DISTRO_PYTHON = "3.10"  # Ubuntu 22.04's python3 (packages.ubuntu.com, jammy: python3 3.10)
CUDA_ARCHIVE_PAGE = "https://developer.nvidia.com/cuda-toolkit-archive"
CUDNN_ARCHIVE_PAGE = "https://developer.nvidia.com/rdp/cudnn-archive"
PYTHON_DOWNLOADS = "https://www.python.org/downloads/windows/"
# PowerShell treats these four characters as single quotes too; a literal doubles each of them.
_PS_SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b"
_VERSION = re.compile(r"^\d+(\.\d+){1,3}$")
_MINOR = re.compile(r"^\d+\.\d+$")


def ps_quote(value: str) -> str:
    """A PowerShell single-quoted literal of `value` (no expansion happens inside one)."""
    if any(ord(c) < 32 for c in value):
        raise ValueError(f"control character in a value for a PowerShell script: {value!r}")
    for quote in _PS_SINGLE_QUOTES:
        value = value.replace(quote, quote * 2)
    return f"'{value}'"


def ps_array(values) -> str:
    return "@(" + ", ".join(ps_quote(v) for v in values) + ")"


def _checked(value: str, pattern: re.Pattern, what: str) -> str:
    if not pattern.match(value):
        raise ValueError(f"{what} {value!r} is not of the expected form")
    return value


def ps_version(text: str) -> str:
    """A version PowerShell's [version] accepts: it needs at least major.minor ("495" -> "495.0")."""
    _checked(text, re.compile(r"^\d+(\.\d+){0,3}$"), "version")
    return text if "." in text else f"{text}.0"


def here_string(lines: list[str]) -> str:
    """A single-quoted here-string: literal text, ended by '@ at the start of a line."""
    for line in lines:
        if line[:1] in _PS_SINGLE_QUOTES and line[1:2] == "@":
            raise ValueError(f"a line would end the here-string early: {line!r}")
        if any(ord(c) < 32 and c != "\t" for c in line):
            raise ValueError(f"control character in here-string line: {line!r}")
    return "@'\n" + "\n".join(lines) + "\n'@"


# -- static script parts (no Python formatting inside: they only use the variables set above them) ------------
PRELUDE = r"""Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'
$ProgressPreference = 'SilentlyContinue'  # Invoke-WebRequest is many times slower with its progress bar

function Stop-Plan([string]$Message) {
    Write-Host "ERROR: $Message" -ForegroundColor Red
    exit 1
}

function Invoke-WithTimeout([string]$FilePath, [string[]]$Arguments, [int]$TimeoutSeconds) {
    # Runs a program with a time limit; returns its exit code and standard output.
    $outFile = [System.IO.Path]::GetTempFileName()
    try {
        $options = @{ FilePath = $FilePath; NoNewWindow = $true; PassThru = $true; RedirectStandardOutput = $outFile }
        if ($Arguments.Count -gt 0) { $options['ArgumentList'] = $Arguments }
        $process = Start-Process @options
        $null = $process.Handle  # keeps the exit code readable after the wait
        if (-not $process.WaitForExit($TimeoutSeconds * 1000)) {
            try { $process.Kill() } catch { }
            Stop-Plan "$FilePath did not finish within $TimeoutSeconds seconds"
        }
        $text = Get-Content -Raw -LiteralPath $outFile
        if ($null -eq $text) { $text = '' }
        return [pscustomobject]@{ ExitCode = $process.ExitCode; Output = [string]$text }
    } finally {
        Remove-Item -LiteralPath $outFile -ErrorAction SilentlyContinue
    }
}

function Get-DriverVersion {
    # nvidia-smi: the CSV query is stable; the banner says 'Driver Version' before driver 610, 'KMD Version' after.
    $candidates = @(
        (Join-Path $env:SystemRoot 'System32\nvidia-smi.exe'),
        (Join-Path $env:ProgramFiles 'NVIDIA Corporation\NVSMI\nvidia-smi.exe')
    )
    $found = Get-Command nvidia-smi.exe -ErrorAction SilentlyContinue
    if ($found) { $candidates = @($found.Source) + $candidates }
    $smi = $candidates | Where-Object { Test-Path -LiteralPath $_ } | Select-Object -First 1
    if (-not $smi) { return $null }
    $query = Invoke-WithTimeout $smi @('--query-gpu=driver_version', '--format=csv,noheader') 30
    $first = ($query.Output -split "`r?`n" | Where-Object { $_.Trim() } | Select-Object -First 1)
    if ($query.ExitCode -eq 0 -and $first -and $first.Trim() -match '^\d+\.\d+(\.\d+)?$') {
        return [version]$first.Trim()
    }
    # Banner (no arguments) first, then the full query: both carry the label.
    foreach ($fullQuery in @($false, $true)) {
        $result = if ($fullQuery) { Invoke-WithTimeout $smi @('-q') 30 } else { Invoke-WithTimeout $smi @() 30 }
        if ($result.Output -match '(?:Driver|KMD) Version\s*:\s*(\d+\.\d+(?:\.\d+)?)') { return [version]$Matches[1] }
    }
    return $null
}

function Assert-Driver {
    $driver = Get-DriverVersion
    if ($null -eq $driver) {
        Stop-Plan "nvidia-smi was not found or printed no driver version: install an NVIDIA driver >= $MinDriver (https://www.nvidia.com/Download/index.aspx)."
    }
    if ($driver -lt [version]$MinDriver) {
        Stop-Plan "NVIDIA driver $driver is older than $MinDriver, the minimum for CUDA $CudaVersion. Update the driver (https://www.nvidia.com/Download/index.aspx)."
    }
    Write-Host "NVIDIA driver $driver (>= $MinDriver): ok"
}
"""

NATIVE_STEPS = r"""
function Add-UserPath([string]$Directory) {
    # Prepends a folder to the user PATH (kept across sessions) and to this session's PATH, once. The registry value
    # is read unexpanded and written back as the kind it was (REG_EXPAND_SZ when new), so entries such as
    # %USERPROFILE%\bin stay variables: [Environment]::SetEnvironmentVariable would write them expanded, as REG_SZ.
    $key = [Microsoft.Win32.Registry]::CurrentUser.CreateSubKey('Environment')
    try {
        $current = [string]$key.GetValue('Path', '', [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
        $kind = [Microsoft.Win32.RegistryValueKind]::ExpandString
        if (($key.GetValueNames() -contains 'Path') -and
                $key.GetValueKind('Path') -eq [Microsoft.Win32.RegistryValueKind]::String) {
            $kind = [Microsoft.Win32.RegistryValueKind]::String
        }
        $parts = @($current -split ';' | Where-Object { $_ })
        $normalized = $Directory.TrimEnd('\')
        $present = $parts | Where-Object { [Environment]::ExpandEnvironmentVariables($_).TrimEnd('\') -ieq $normalized }
        if (-not $present) {
            $key.SetValue('Path', ((@($Directory) + $parts) -join ';'), $kind)
            Write-Host "Added to the user PATH: $Directory"
        }
    } finally {
        $key.Close()
    }
    if (-not (($env:Path -split ';') | Where-Object { $_.TrimEnd('\') -ieq $normalized })) {
        $env:Path = "$Directory;$env:Path"
    }
}

function Test-Administrator {
    $identity = [Security.Principal.WindowsIdentity]::GetCurrent()
    return (New-Object Security.Principal.WindowsPrincipal $identity).IsInRole(
        [Security.Principal.WindowsBuiltInRole]::Administrator)
}

# 1. Visual C++ runtime (where the knowledge base records the one the framework needs)
if ($MsvcName) {
    $vcKey = Get-ItemProperty -LiteralPath $MsvcRegistry -ErrorAction SilentlyContinue
    $vcInstalled = $vcKey -and $vcKey.PSObject.Properties['Installed'] -and $vcKey.Installed -eq 1
    $vcDll = Join-Path $env:SystemRoot (Join-Path 'System32' $MsvcDll)
    if (-not $vcInstalled -or -not (Test-Path -LiteralPath $vcDll)) {
        Stop-Plan "$MsvcName is missing ($MsvcDll not found). Install it from $MsvcUrl (see $MsvcPage), then run this script again."
    }
    $vcVersion = if ($vcKey.PSObject.Properties['Version']) { $vcKey.Version } else { 'unknown version' }
    Write-Host "Visual C++ runtime ($vcVersion, $MsvcDll): ok"
}

if ($HasCuda) {
    # 2. Driver
    Assert-Driver
}

if ($SystemCuda) {
    # 3. CUDA toolkit
    $cudaRoot = Join-Path $env:ProgramFiles "NVIDIA GPU Computing Toolkit\CUDA\v$CudaVersion"
    if (-not (Test-Path -Path (Join-Path $cudaRoot 'bin\cudart64_*.dll'))) {
        if (-not $CudaInstallerUrl) {
            Stop-Plan "CUDA $CudaRelease is not installed and no installer is recorded for it: get it from $CudaArchivePage, install it, and run this script again."
        }
        if (-not (Test-Administrator)) {
            Stop-Plan "CUDA $CudaRelease is not installed; run this script from an elevated PowerShell (Run as administrator) to install it."
        }
        $installer = Join-Path $env:TEMP "cuda_$($CudaRelease)_installer.exe"
        if (-not (Test-Path -LiteralPath $installer)) {
            Write-Host "Downloading CUDA $CudaRelease ($CudaInstallerKind installer) from $CudaInstallerUrl"
            Invoke-WebRequest -Uri $CudaInstallerUrl -OutFile $installer -UseBasicParsing -TimeoutSec 3600
        }
        Write-Host "Installing CUDA $CudaRelease components: $($CudaComponents -join ' ')"
        $result = Invoke-WithTimeout $installer (@('-s') + $CudaComponents) 3600
        if ($result.ExitCode -ne 0) { Stop-Plan "the CUDA installer exited with code $($result.ExitCode)" }
        if (-not (Test-Path -Path (Join-Path $cudaRoot 'bin\cudart64_*.dll'))) {
            Stop-Plan "the CUDA installer finished but $cudaRoot\bin has no cudart64_*.dll"
        }
    }
    Write-Host "CUDA $CudaVersion in ${cudaRoot}: ok"

    # 4. cuDNN
    if (-not $CudnnBin) { $CudnnBin = Join-Path $ToolsDir "cudnn-$CudnnVersion-cuda$CudnnCuda\$CudnnZipRoot\bin" }
    if (-not (Test-Path -Path (Join-Path $CudnnBin 'cudnn64_*.dll'))) {
        if (-not $CudnnZipFile) {
            Stop-Plan "cuDNN $CudnnVersion for CUDA $CudnnCuda is not recorded for Windows: download it from $CudnnArchivePage, extract it, and run this script again with -CudnnBin <the extracted bin folder>."
        }
        if (-not $CudnnZip) { $CudnnZip = Join-Path (Join-Path $HOME 'Downloads') $CudnnZipFile }
        if (-not (Test-Path -LiteralPath $CudnnZip)) {
            if ($CudnnLoginRequired) {
                Stop-Plan "cuDNN needs an NVIDIA developer login to download: get $CudnnZipFile from $CudnnPage ($CudnnZipUrl), save it as $CudnnZip, and run this script again."
            }
            Write-Host "Downloading cuDNN $CudnnVersion from $CudnnZipUrl"
            Invoke-WebRequest -Uri $CudnnZipUrl -OutFile $CudnnZip -UseBasicParsing -TimeoutSec 3600
        }
        $cudnnHome = Join-Path $ToolsDir "cudnn-$CudnnVersion-cuda$CudnnCuda"
        Expand-Archive -LiteralPath $CudnnZip -DestinationPath $cudnnHome -Force
        if (-not (Test-Path -Path (Join-Path $CudnnBin 'cudnn64_*.dll'))) {
            Stop-Plan "$CudnnZip did not contain $CudnnZipRoot\bin\cudnn64_*.dll"
        }
    }
    Write-Host "cuDNN $CudnnVersion in ${CudnnBin}: ok"

    # 5. PATH and CUDA_PATH: missing PATH entries are the most common reason TensorFlow finds no GPU on Windows.
    foreach ($sub in $CudaBinDirs) {
        $dir = Join-Path $cudaRoot $sub
        if (Test-Path -LiteralPath $dir) { Add-UserPath $dir }
    }
    Add-UserPath $CudnnBin
    # Last: SetEnvironmentVariable tells running programs (Explorer) that the user environment changed, the PATH
    # written to the registry above included, so new terminals see both.
    [Environment]::SetEnvironmentVariable('CUDA_PATH', $cudaRoot, 'User')
    $env:CUDA_PATH = $cudaRoot
}

# 6. Python and the virtual environment
$pyLauncher = Get-Command py.exe -ErrorAction SilentlyContinue
if (-not $pyLauncher) { Stop-Plan "the Python launcher (py.exe) was not found: install Python $PythonVersion (64-bit) from $PythonDownloads" }
& py "-$PythonVersion" -c 'import struct, sys; sys.exit(0 if struct.calcsize(''P'') == 8 else 3)'
if ($LASTEXITCODE -eq 3) { Stop-Plan "Python $PythonVersion is 32-bit; $Framework needs 64-bit Python $PythonVersion from $PythonDownloads" }
if ($LASTEXITCODE -ne 0) { Stop-Plan "Python $PythonVersion is not installed: get the 64-bit installer from $PythonDownloads" }
if (-not $VenvDir) { $VenvDir = Join-Path $HOME ".venvs\$EnvName" }
if (-not (Test-Path -LiteralPath (Join-Path $VenvDir 'Scripts\python.exe'))) {
    & py "-$PythonVersion" -m venv $VenvDir
    if ($LASTEXITCODE -ne 0) { Stop-Plan "could not create the virtual environment $VenvDir" }
}
$venvPython = Join-Path $VenvDir 'Scripts\python.exe'
$requirementsFile = Join-Path $VenvDir 'requirements.txt'
[System.IO.File]::WriteAllText($requirementsFile, ($Requirements -replace "`r`n", "`n") + "`n")
& $venvPython -m pip install --upgrade pip
if ($LASTEXITCODE -ne 0) { Stop-Plan 'pip could not upgrade itself' }
& $venvPython -m pip install -r $requirementsFile
if ($LASTEXITCODE -ne 0) { Stop-Plan "pip could not install $requirementsFile" }

# 7. Check
& $venvPython -c $CheckCode
if ($LASTEXITCODE -ne 0) {
    Stop-Plan "$Framework $Version did not pass the check. Open a new terminal (PATH changes apply to new sessions) and run: $venvPython -c `"$CheckCode`""
}
Write-Host "Done: $Framework $Version in $VenvDir (activate with $VenvDir\Scripts\Activate.ps1)" -ForegroundColor Green
"""

WSL_STEPS = r"""
# 1. Windows driver (WSL2 uses the Windows driver; do not install a Linux driver inside WSL)
if ($HasCuda) { Assert-Driver }

# 2. WSL and the Ubuntu distribution
$wsl = Get-Command wsl.exe -ErrorAction SilentlyContinue
if (-not $wsl) { Stop-Plan 'wsl.exe was not found: WSL2 needs Windows 10 21H2 (build 19044) or newer, or Windows 11.' }
$listed = Invoke-WithTimeout $wsl.Source @('--list', '--quiet') 60
$distros = @(($listed.Output -replace "`0", '') -split "`r?`n" | ForEach-Object { $_.Trim() } | Where-Object { $_ })
if ($distros -notcontains $Distro) {
    Write-Host "Installing $Distro in WSL2 (wsl --install -d $Distro)"
    & wsl.exe --install -d $Distro
    if ($LASTEXITCODE -ne 0) { Stop-Plan "wsl --install -d $Distro failed (run it from an elevated PowerShell)" }
    Write-Host "Start $Distro once from the Start menu to create your Linux user (reboot first if Windows asks), then run this script again."
    exit 0
}

# 3. The Linux plan, run inside WSL
$scriptFile = Join-Path $env:TEMP 'stackresolve-wsl-plan.sh'
[System.IO.File]::WriteAllText($scriptFile, ($LinuxScript -replace "`r`n", "`n"))
$linuxPath = (& wsl.exe -d $Distro -- wslpath -a -u $scriptFile | Select-Object -First 1)
if ($LASTEXITCODE -ne 0 -or -not $linuxPath) { Stop-Plan "wslpath could not translate $scriptFile" }
& wsl.exe -d $Distro -- bash $linuxPath.Trim()
if ($LASTEXITCODE -ne 0) { Stop-Plan "the plan inside $Distro failed (exit code $LASTEXITCODE)" }
Write-Host "Done: $Framework $Version inside $Distro" -ForegroundColor Green
"""


def _native(plan: WindowsNativePlan) -> str:
    resolution, stack = plan.resolution, plan.resolution.stack
    version = _checked(stack.framework.upstream_version, _VERSION, "framework version")
    python = _checked(plan.pip.python, _MINOR, "Python version")
    msvc = plan.msvc
    system_cuda = stack.cuda is not None and stack.delivery is Delivery.SYSTEM
    values = {
        "Framework": ps_quote(stack.framework.framework.display),
        "Version": ps_quote(version),
        "EnvName": ps_quote(environment_name(stack)),
        "PythonVersion": ps_quote(python),
        "MsvcName": ps_quote(msvc.name if msvc else ""),
        "MsvcDll": ps_quote(msvc.dll if msvc else ""),
        "MsvcRegistry": ps_quote(msvc.registry if msvc else ""),
        "MsvcUrl": ps_quote(msvc.download_url if msvc else ""),
        "MsvcPage": ps_quote(msvc.page if msvc else ""),
        "PythonDownloads": ps_quote(PYTHON_DOWNLOADS),
        "HasCuda": "$true" if stack.cuda else "$false",
        "SystemCuda": "$true" if system_cuda else "$false",
        "CheckCode": ps_quote(plan.check_code),
        # Every value a step reads is set, empty where this plan has no use for it: under Set-StrictMode an unset
        # variable is an error even in a message string.
        **dict.fromkeys(("MinDriver", "CudaVersion", "CudaRelease", "CudaInstallerUrl", "CudaInstallerKind",
                         "CudaArchivePage", "CudnnVersion", "CudnnCuda", "CudnnZipFile", "CudnnZipRoot",
                         "CudnnZipUrl", "CudnnPage", "CudnnArchivePage"), ps_quote("")),
        "CudaComponents": ps_array(()),
        "CudaBinDirs": ps_array(()),
        "CudnnLoginRequired": "$false",
    }
    notes = [f"# Visual C++ runtime: {msvc.source}" if msvc else
             "# Visual C++ runtime: not checked (the knowledge base records it for TensorFlow only)"]
    if stack.cuda and not system_cuda:
        values["MinDriver"] = ps_quote(ps_version(stack.driver.minimum))
        values["CudaVersion"] = ps_quote(_checked(stack.cuda.version, _MINOR, "CUDA version"))
        notes.append(f"# CUDA {stack.cuda.version}: {stack.cuda.why}; no CUDA installer or cuDNN zip is needed")
        notes.append(f"# Driver >= {stack.driver.minimum}: {stack.driver.why} ({stack.driver.source})")
    elif stack.cuda:
        cuda = _checked(stack.cuda.version, _MINOR, "CUDA version")
        release = _checked(stack.cuda.release, _VERSION, "CUDA release")
        cudnn = _checked(stack.cudnn.full_version, _VERSION, "cuDNN version")
        installer, zipped = plan.installer, plan.cudnn_zip
        values.update({
            "MinDriver": ps_quote(ps_version(stack.driver.minimum)),
            "CudaVersion": ps_quote(cuda),
            "CudaRelease": ps_quote(installer.release if installer else release),
            "CudaInstallerUrl": ps_quote(installer.url if installer else ""),
            "CudaInstallerKind": ps_quote(installer.kind if installer else ""),
            "CudaComponents": ps_array(installer.components if installer else ()),
            "CudaBinDirs": ps_array(installer.bin_dirs if installer else ("bin", "libnvvp", "extras\\CUPTI\\lib64")),
            "CudaArchivePage": ps_quote(CUDA_ARCHIVE_PAGE),
            "CudnnVersion": ps_quote(zipped.full_version if zipped else cudnn),
            "CudnnCuda": ps_quote(zipped.cuda if zipped else stack.cudnn.built_for_cuda),
            "CudnnZipFile": ps_quote(zipped.file if zipped else ""),
            "CudnnZipRoot": ps_quote(zipped.root if zipped else "cuda"),
            "CudnnZipUrl": ps_quote(zipped.url if zipped else ""),
            "CudnnPage": ps_quote(zipped.page if zipped else CUDNN_ARCHIVE_PAGE),
            "CudnnLoginRequired": "$true" if (zipped is None or zipped.login_required) else "$false",
            "CudnnArchivePage": ps_quote(CUDNN_ARCHIVE_PAGE),
        })
        notes.append(f"# CUDA {cuda}: {stack.cuda.why} ({stack.cuda.source})")
        if installer:
            notes.append(f"#   installer: {installer.source}")
        notes.append(f"# cuDNN {stack.cudnn.version}: {stack.cudnn.why}")
        if zipped:
            notes.append(f"#   zip: {zipped.source}" + ("; needs an NVIDIA developer login" if zipped.login_required
                                                         else ""))
        notes.append(f"# Driver >= {stack.driver.minimum}: {stack.driver.why} ({stack.driver.source})")
    lines = [safe_header(resolution, "powershell").rstrip("\n"), *(one_line(note) for note in notes),
             *usage_lines(plan.script),
             "#Requires -Version 5.1",
             "param(",
             "    [string]$VenvDir = '',",
             "    [string]$CudnnZip = '',",
             "    [string]$CudnnBin = '',",
             "    [string]$ToolsDir = 'C:\\tools'",
             ")",
             PRELUDE.rstrip("\n"),
             "",
             "# -- the plan's values",
             *[f"${name} = {value}" for name, value in values.items()],
             "$Requirements = " + here_string([*plan.pip.index_lines, *requirement_lines(plan.pip)]),
             NATIVE_STEPS.rstrip("\n")]
    return "\n".join(lines) + "\n"


def _linux_script(plan: WslPlan) -> list[str]:
    stack = plan.inside.stack
    version = _checked(stack.framework.upstream_version, _VERSION, "framework version")
    python = _checked(plan.pip.python, _MINOR, "Python version")
    venv = f"$HOME/.venvs/{environment_name(stack)}"
    pip_args = " \\\n    ".join(shlex.quote(line) for line in (*plan.pip.index_args, *requirement_lines(plan.pip)))
    script = [
        "#!/usr/bin/env bash",
        "# Written by stackresolve: the Linux pip plan, run inside WSL2.",
        "set -euo pipefail",
        f"PY=python{python}",
        f"VENV=\"{venv}\"",
    ]
    if plan.system_cuda:
        cuda = _checked(stack.cuda.version, _MINOR, "CUDA version")
        cudnn = _checked(stack.cudnn.version, _VERSION, "cuDNN version")
        script += [
            f"if [ ! -d /usr/local/cuda-{cuda} ]; then",
            f"  echo 'CUDA {cuda} and cuDNN {cudnn} are not installed in this WSL distribution: run' >&2",
            f"  echo 'stackresolve plan {stack.framework.framework.flag} {version} --os wsl2 --format apt "
            f"inside WSL first (no Linux driver).' >&2",
            "  exit 1",
            "fi",
        ]
    script += [
        "if ! command -v \"$PY\" >/dev/null 2>&1; then",
        f"  # Ubuntu 22.04 ships Python {WSL_DISTRO_PYTHON}; other versions come from the deadsnakes PPA.",
        "  sudo apt-get update",
        "  sudo apt-get install -y software-properties-common",
        "  sudo add-apt-repository -y ppa:deadsnakes/ppa",
        "fi",
        "sudo apt-get update",
        "sudo apt-get install -y \"$PY\" \"$PY-venv\"",
        "[ -x \"$VENV/bin/python\" ] || \"$PY\" -m venv \"$VENV\"",
        "\"$VENV/bin/python\" -m pip install --upgrade pip",
        *[f"\"$VENV/bin/python\" -m pip install {shlex.quote(p)}" for p in plan.pip.pre_install],
        "\"$VENV/bin/python\" -m pip install \\\n    " + pip_args,
        "\"$VENV/bin/python\" -c \"" + plan.check_code + "\"",
        f"echo \"{stack.framework.framework.display} is in $VENV (source $VENV/bin/activate)\"",
    ]
    return "\n".join(script).split("\n")


def _wsl(plan: WslPlan) -> str:
    stack = plan.inside.stack
    version = _checked(stack.framework.upstream_version, _VERSION, "framework version")
    values = {
        "Framework": ps_quote(stack.framework.framework.display),
        "Version": ps_quote(version),
        "Distro": ps_quote(WSL_DISTRO),
        "HasCuda": "$true" if stack.cuda else "$false",
        "MinDriver": ps_quote(ps_version(stack.driver.minimum) if stack.cuda else ""),
        "CudaVersion": ps_quote(stack.cuda.version if stack.cuda else ""),
    }
    lines = [safe_header(plan.resolution, "powershell").rstrip("\n"),
             one_line(f"# WSL2 route: {plan.why}"),
             *([f"#   ({NATIVE_GPU_END_SOURCE})"] if stack.framework.framework is Framework.TENSORFLOW else []),
             one_line(f"# Stack inside WSL2: {stack.summary}"),
             *usage_lines(plan.script),
             "#Requires -Version 5.1",
             PRELUDE.rstrip("\n"),
             "",
             "# -- the plan's values",
             *[f"${name} = {value}" for name, value in values.items()],
             "$LinuxScript = " + here_string(_linux_script(plan)),
             WSL_STEPS.rstrip("\n")]
    return "\n".join(lines) + "\n"


def usage_lines(script) -> list[str]:
    """How to run the script, under the name it was written to (plan.windows.ScriptName)."""
    name = script.run
    path = f".\\{name}" if re.fullmatch(r"[A-Za-z0-9._-]+", name) else ps_quote(f".\\{name}")
    lines = [f"# Run from PowerShell: powershell -ExecutionPolicy Bypass -File {path}"]
    if script.written:
        lines.insert(0, one_line(f"# Written as {script.written}: rename it to {name} first (powershell -File runs "
                                 f"only .ps1 files)"))
    return lines


def render(plan) -> str:
    if isinstance(plan, WslPlan):
        return _wsl(plan)
    return _native(plan)
