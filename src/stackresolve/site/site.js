// stackresolve site: looks the answers up in data.js (made by `stackresolve site`) and shows them. It decides
// nothing: every row is a row of `stackresolve matrix --json`, every plan what `stackresolve plan` prints.
"use strict";
(function () {
  var DATA = window.STACKRESOLVE_SITE;
  var S = DATA.strings;
  var FIELDS = DATA.row_fields;
  var NO_DRIVER = "";
  var OS_NAMES = {linux: "Linux", windows: "Windows (native)", wsl2: "WSL2 (Linux on Windows)", macos: "macOS"};
  var STATUS_WORDS = {
    "native": "yes",
    "ptx-jit": "yes, through PTX JIT",
    "cpu-only": "CPU only",
    "unknown": "maybe (not recorded)",
    "impossible": "no"
  };
  var FORMAT_NAMES = {pip: "pip (requirements.txt)", conda: "conda (environment.yml)", dockerfile: "Docker (Dockerfile)"};
  var $ = function (id) { return document.getElementById(id); };
  var byFlag = {}, byName = {};
  DATA.frameworks.forEach(function (fw) { byFlag[fw.flag] = fw; byName[fw.name] = fw; });

  function text(tag, value, cls) {
    var node = document.createElement(tag);
    if (value) node.textContent = value;
    if (cls) node.className = cls;
    return node;
  }

  // A driver version as NVIDIA prints it (the format `stackresolve --driver` accepts), ordered by its numbers
  // with trailing zeros not counting, as stackresolve orders DriverVersion.
  function driverNumbers(value) {
    if (!/^([0-9]{2,4}\.[0-9]{1,3}(\.[0-9]{1,3})?|[0-9]{3})$/.test(value)) return null;
    return value.split(".").map(Number);
  }
  function compareDrivers(a, b) {
    for (var i = 0; i < Math.max(a.length, b.length); i++) {
      var d = (a[i] || 0) - (b[i] || 0);
      if (d) return d;
    }
    return 0;
  }

  function fillSelect(select, options) {
    select.textContent = "";
    options.forEach(function (o) {
      if (o.group) {
        var group = document.createElement("optgroup");
        group.label = o.group;
        fillSelect.into(group, o.options);
        select.appendChild(group);
      } else {
        fillSelect.into(select, [o]);
      }
    });
  }
  fillSelect.into = function (parent, options) {
    options.forEach(function (o) {
      var option = document.createElement("option");
      option.value = o.value;
      option.textContent = o.label;
      parent.appendChild(option);
    });
  };

  function gpuOptions() {
    var groups = [];
    DATA.ccs.forEach(function (cc) {
      var models = DATA.gpus.filter(function (g) { return g[1] === cc; });
      var arch = models.length ? " (" + models[0][2] + ")" : "";
      groups.push({group: "Compute capability " + cc + arch, options: [{value: cc, label: "Any GPU of compute capability " + cc}]
        .concat(models.map(function (g) { return {value: g[0], label: g[0] + " (" + cc + ")"}; }))});
    });
    return groups;
  }

  function folded(name) { return name.toLowerCase().replace(/\s+/g, " ").trim(); }
  var modelByName = {};  // a model's name and aliases, folded -> the model
  DATA.gpus.forEach(function (g) {
    [g[0]].concat(g[3]).forEach(function (name) {
      if (!modelByName[folded(name)]) modelByName[folded(name)] = g;
    });
  });
  function ccOf(gpu) {
    if (DATA.ccs.indexOf(gpu) >= 0) return gpu;
    var model = modelByName[folded(gpu)];
    return model ? model[1] : null;
  }
  function gpuValue(gpu) {  // the select's value for a GPU named in a link: the model's own name, or the cc
    if (DATA.ccs.indexOf(gpu) >= 0) return gpu;
    var model = modelByName[folded(gpu)];
    return model ? model[0] : null;
  }

  function driverOptions(os) {
    var listed = (DATA.drivers[os] || []).slice().reverse();
    if (os === "macos") return [{value: NO_DRIVER, label: "None (macOS: no CUDA driver)"}];
    return [{value: NO_DRIVER, label: "Not given (plans name their minimum)"}].concat(
      listed.map(function (d) { return {value: d, label: d}; }));
  }

  // -- the choice <-> the fragment -------------------------------------------------------------------------
  function readFragment() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    return {framework: params.get("framework"), gpu: params.get("gpu"), driver: params.get("driver"), os: params.get("os")};
  }
  function fragmentOf(choice) {
    var params = new URLSearchParams();
    params.set("framework", byName[choice.framework].flag);
    params.set("gpu", choice.gpu);
    if (choice.driver) params.set("driver", choice.driver);
    params.set("os", choice.os);
    return "#" + params.toString();
  }

  var state = {framework: "tensorflow", gpu: "8.6", driver: NO_DRIVER, os: "linux", asked: null, problems: []};

  function applyFragment() {
    var wanted = readFragment();
    var problems = [];
    state.asked = null;
    if (wanted.framework) {
      if (byFlag[wanted.framework]) state.framework = byFlag[wanted.framework].name;
      else if (byName[wanted.framework]) state.framework = wanted.framework;
      else problems.push("framework '" + wanted.framework + "' is not one of tf, torch, jax");
    }
    if (wanted.os) {
      if (DATA.systems.indexOf(wanted.os) >= 0) state.os = wanted.os;
      else problems.push("os '" + wanted.os + "' is not one of " + DATA.systems.join(", "));
    }
    if (wanted.gpu) {
      var value = gpuValue(wanted.gpu.trim());
      if (value) state.gpu = value;
      else problems.push("GPU '" + wanted.gpu + "' is neither a model this page knows nor a compute capability (" +
        DATA.ccs.join(", ") + ")");
    }
    state.driver = NO_DRIVER;
    if (wanted.driver && state.os !== "macos") {
      var numbers = driverNumbers(wanted.driver.trim());
      var listed = DATA.drivers[state.os] || [];
      if (!numbers) {
        problems.push("driver '" + wanted.driver + "' is not an NVIDIA driver version (e.g. 535.54.03, or a branch such as 580)");
      } else {
        var below = listed.filter(function (d) { return compareDrivers(driverNumbers(d), numbers) <= 0; });
        if (!below.length) {
          state.asked = {driver: wanted.driver, below: null};
        } else {
          state.driver = below[below.length - 1];
          if (compareDrivers(driverNumbers(state.driver), numbers) !== 0) state.asked = {driver: wanted.driver, below: state.driver};
        }
      }
    }
    state.problems = problems;
  }

  function showChoice() {
    $("framework").value = state.framework;
    $("gpu").value = state.gpu;
    fillSelect($("driver"), driverOptions(state.os));
    $("driver").value = state.driver;
    $("driver").disabled = state.os === "macos";
    $("os").value = state.os;
  }

  // -- the answer ------------------------------------------------------------------------------------------
  function rowOf(number) {
    var raw = DATA.rows[number], row = {};
    FIELDS.forEach(function (name, i) { row[name] = name === "plan" ? raw[i] : S[raw[i]]; });
    return row;
  }

  function answerRows(choice) {
    var cc = ccOf(choice.gpu);
    var byDriver = DATA.answers[choice.framework][choice.os];
    var list = byDriver[choice.driver];
    if (list === undefined) return null;
    return DATA.lists[list[DATA.ccs.indexOf(cc)]].map(rowOf);
  }

  function linkify(parent, value) {  // a source's addresses become links; the rest stays text
    var parts = value.split(/(https?:\/\/[^\s;,)]+)/);
    parts.forEach(function (part, i) {
      if (i % 2) {
        var a = text("a", part);
        a.href = part;
        a.rel = "noreferrer";
        parent.appendChild(a);
      } else if (part) {
        parent.appendChild(document.createTextNode(part));
      }
    });
  }

  function planCommand(choice, row, fmt) {
    var fw = byName[choice.framework];
    var cc = ccOf(choice.gpu);
    var gpu = choice.os === "macos" ? "--cpu" :  // the matrix answers a Mac with its CPU build
      cc === choice.gpu ? "--gpu-cc " + cc : "--gpu '" + choice.gpu.replace(/'/g, "'\\''") + "'";
    // --no-detect: the page's choice, not this machine's GPU and driver
    var words = ["stackresolve plan", "--no-detect", "--" + fw.flag, row.line, "--os", choice.os, gpu];
    if (choice.driver) words.push("--driver", choice.driver);
    if (row.plan_vendor) words.push("--vendor", row.plan_vendor);
    words.push("--format", fmt);
    return words.join(" ");
  }

  function planDetails(choice, row) {
    var details = document.createElement("details");
    var summary = text("summary", "Plans and sources for " + byName[choice.framework].display + " " + row.line);
    details.appendChild(summary);
    details.addEventListener("toggle", function () {
      if (!details.open || details.dataset.filled) return;
      details.dataset.filled = "1";
      var plan = DATA.plans[row.plan];
      Object.keys(FORMAT_NAMES).forEach(function (fmt) {
        details.appendChild(text("h3", FORMAT_NAMES[fmt]));
        var cmd = text("p", "", "command");
        cmd.appendChild(text("code", planCommand(choice, row, fmt)));
        cmd.appendChild(document.createTextNode(" prints:"));
        if (plan.formats[fmt]) {
          details.appendChild(cmd);
          var pre = text("pre", plan.formats[fmt].map(function (n) { return S[n]; }).join("\n"));
          pre.tabIndex = 0;
          pre.setAttribute("aria-label", FORMAT_NAMES[fmt] + " plan");
          details.appendChild(pre);
          if (fmt === "pip" && plan.uv !== undefined) {
            var uv = text("p", "With uv, the same file: ");
            uv.appendChild(text("code", S[plan.uv]));
            details.appendChild(uv);
          }
        } else {
          details.appendChild(text("p", "Not in this format: " + S[plan.refused[fmt]]));
        }
      });
      details.appendChild(text("h3", "Where each fact comes from"));
      var table = document.createElement("table");
      table.className = "facts";
      var head = table.createTHead().insertRow();
      ["Part", "Why", "Source"].forEach(function (h) { var th = text("th", h); th.scope = "col"; head.appendChild(th); });
      var body = table.createTBody();
      plan.facts.forEach(function (fact) {
        var tr = body.insertRow();
        var th = text("th", S[fact[0]]);
        th.scope = "row";
        tr.appendChild(th);
        tr.appendChild(text("td", S[fact[1]]));
        var source = document.createElement("td");
        linkify(source, S[fact[2]]);
        tr.appendChild(source);
      });
      details.appendChild(table);
    });
    return details;
  }

  function describe(choice) {
    var fw = byName[choice.framework].display;
    var cc = ccOf(choice.gpu);
    var gpu = cc === choice.gpu ? "any GPU of compute capability " + cc : choice.gpu + " (compute capability " + cc + ")";
    var driver = choice.os === "macos" ? "" : choice.driver ? ", driver " + choice.driver : ", no driver given";
    return fw + " on " + gpu + driver + ", " + OS_NAMES[choice.os];
  }

  function render() {
    var started = performance.now();
    var choice = {framework: state.framework, gpu: state.gpu, driver: state.driver, os: state.os};
    var fragment = fragmentOf(choice);
    if (location.hash !== fragment && !state.asked) history.replaceState(null, "", fragment);
    $("permalink").href = state.asked ? location.hash : fragment;
    var notes = state.problems.slice();
    if (state.asked && state.asked.below) {
      notes.push("Driver " + state.asked.driver + " is not listed: these are the answers for driver " + state.asked.below +
        ", the newest listed driver below it. `stackresolve matrix --driver " + state.asked.driver + "` gives yours.");
    } else if (state.asked) {
      notes.push("Driver " + state.asked.driver + " is older than every driver listed (" + (DATA.drivers[state.os] || [])[0] +
        " is the oldest): these are the answers with no driver given. `stackresolve matrix --driver " +
        state.asked.driver + "` gives yours.");
    }
    $("note").hidden = !notes.length;
    $("note").textContent = notes.join(" ");
    var rows = answerRows(choice) || [];
    var body = document.createElement("tbody");
    var yes = 0;
    rows.forEach(function (row) {
      var tr = document.createElement("tr");
      FIELDS.forEach(function (name) {
        if (name !== "plan" && name !== "plan_vendor") tr.setAttribute("data-" + name.replace(/_/g, "-"), row[name]);
      });
      tr.className = "status-" + row.status;
      var th = text("th", row.line);
      th.scope = "row";
      tr.appendChild(th);
      tr.appendChild(text("td", STATUS_WORDS[row.status] || row.status, "runs"));
      var ok = row.status !== "impossible";
      if (ok) yes += 1;
      var build = ok ? row.package + " " + row.version + (row.variant ? " (" + row.variant + ")" : "") : "";
      if (ok && row.vendor === "nvidia") build += " (NVIDIA's build)";
      tr.appendChild(text("td", build));
      tr.appendChild(text("td", ok ? row.python : ""));
      tr.appendChild(text("td", ok ? row.cuda || "none" : ""));
      tr.appendChild(text("td", ok ? row.cudnn || "none" : ""));
      tr.appendChild(text("td", ok && row.driver_min ? ">= " + row.driver_min : ""));
      var why = document.createElement("td");
      if (row.reason) why.appendChild(text("p", ok ? "Warnings: " + row.reason : row.reason, "reason"));
      if (ok && row.index) {
        var index = text("p", "Installs from ");
        linkify(index, row.index);
        why.appendChild(index);
      }
      if (ok && row.plan >= 0) why.appendChild(planDetails(choice, row));
      tr.appendChild(why);
      body.appendChild(tr);
    });
    var table = $("rows");
    table.replaceChild(body, table.tBodies[0]);
    var what = describe(choice);
    $("rows-caption").textContent = what;
    $("summary").textContent = what + ": " + yes + " of " + rows.length + " release lines run.";
    document.documentElement.setAttribute("data-answered", fragment);
    var root = document.documentElement;
    root.setAttribute("data-render-ms", String(Math.round((performance.now() - started) * 10) / 10));
    // from the start of navigation: loading the page and its data, then the first answer shown (scripts/bench.py)
    if (!root.hasAttribute("data-first-answer-ms")) root.setAttribute("data-first-answer-ms", String(Math.round(performance.now())));
  }

  function onChange() {
    state.framework = $("framework").value;
    state.gpu = $("gpu").value;
    var os = $("os").value;
    state.driver = os === state.os ? $("driver").value : (DATA.drivers[os] || []).indexOf($("driver").value) >= 0 ? $("driver").value : NO_DRIVER;
    state.os = os;
    state.asked = null;
    state.problems = [];
    showChoice();
    render();
  }

  function start() {
    fillSelect($("framework"), DATA.frameworks.map(function (fw) { return {value: fw.name, label: fw.display}; }));
    fillSelect($("gpu"), gpuOptions());
    fillSelect($("os"), DATA.systems.map(function (os) { return {value: os, label: OS_NAMES[os] || os}; }));
    $("kb").textContent = DATA.knowledge_base;
    ["framework", "gpu", "driver", "os"].forEach(function (id) { $(id).addEventListener("change", onChange); });
    window.addEventListener("hashchange", function () {
      if (location.hash === $("permalink").getAttribute("href")) return;
      applyFragment();
      showChoice();
      render();
    });
    applyFragment();
    showChoice();
    render();
  }

  start();
})();
