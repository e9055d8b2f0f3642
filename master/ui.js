// The web UI's actions (master/ui.go): kill a task, tear a framework down,
// drain an agent (with an optional deadline) or activate it; check, submit,
// stop or revert a job. Each is a POST of JSON to the API; it carries the
// operator token as "Authorization: Bearer <token>" once one was given (a
// principal's own jobs need only the credentials the browser already
// sends). A 401 asks for the token (window.prompt) and keeps it in
// sessionStorage, for this tab only. The page reloads every 5 s, except
// while an action or an input is busy or a job file is being written.
(function () {
  "use strict";

  var TOKEN_KEY = "allot-operator-token";
  var RELOAD_MS = 5000;
  var CODE_NOT_PREEMPTIBLE = 26; // protocol.CodeNotPreemptible
  var busy = false;
  var holdUntil = 0; // an error stays on the page this long

  function status(text) {
    var el = document.getElementById("action-status");
    if (el) {
      el.textContent = text;
    }
  }

  function storedToken() {
    try {
      return window.sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null;
    }
  }

  // askToken prompts for the operator token and keeps it; null when the
  // operator cancelled.
  function askToken() {
    var t = window.prompt("Operator token (kept in this tab until it closes):", "");
    if (t === null) {
      return null;
    }
    try {
      window.sessionStorage.setItem(TOKEN_KEY, t);
    } catch (e) {
      // No storage: the token is asked again next time.
    }
    return t;
  }

  // post sends an operator action and resolves to the answer's JSON, or
  // rejects with an Error whose code is the protocol error code, if any.
  function post(path, body, token, retried) {
    var headers = { "Content-Type": "application/json" };
    if (token) {
      headers.Authorization = "Bearer " + token;
    }
    return fetch(path, {
      method: "POST",
      headers: headers,
      body: JSON.stringify(body || {}),
      credentials: "same-origin"
    }).then(function (resp) {
      if (resp.status === 401 && !retried) {
        var t = askToken();
        if (t === null) {
          throw new Error("this action needs the operator token");
        }
        return post(path, body, t, true);
      }
      return resp.json().catch(function () {
        return {};
      }).then(function (j) {
        if (!resp.ok) {
          var err = new Error(j.error || resp.status + " " + resp.statusText);
          err.code = j.code || 0;
          throw err;
        }
        return j;
      });
    });
  }

  function act(path, body, done) {
    busy = true;
    status("working...");
    post(path, body, storedToken(), false).then(function () {
      window.location.reload();
    }, function (err) {
      busy = false;
      if (done && done(err)) {
        return;
      }
      holdUntil = Date.now() + 3 * RELOAD_MS;
      status(err.message);
    });
  }

  function esc(s) {
    return encodeURIComponent(s);
  }

  function kill(b) {
    var fw = b.getAttribute("data-fw");
    var task = b.getAttribute("data-task");
    if (!window.confirm("Kill task " + task + " of framework " + fw + "?")) {
      return;
    }
    var path = "/v1/frameworks/" + esc(fw) + "/tasks/" + esc(task) + "/kill";
    act(path, {}, function (err) {
      if (err.code !== CODE_NOT_PREEMPTIBLE ||
          !window.confirm("Task " + task + " was launched non-preemptible. Kill it anyway?")) {
        return false;
      }
      act(path, { force: true });
      return true;
    });
  }

  function teardown(b) {
    var fw = b.getAttribute("data-fw");
    if (window.confirm("Tear framework " + fw + " down? Its tasks are shut down.")) {
      act("/v1/frameworks/" + esc(fw) + "/teardown", {});
    }
  }

  function drain(b) {
    var agent = b.getAttribute("data-agent");
    var input = document.getElementById("deadline-" + agent);
    var deadline = input ? input.value.trim() : "";
    var what = deadline ? "; tasks still running in " + deadline + " are killed" : "; its tasks keep running";
    if (window.confirm("Drain agent " + agent + what + "?")) {
      act("/v1/agents/" + esc(agent) + "/drain", deadline ? { deadline: deadline } : {});
    }
  }

  function activate(b) {
    act("/v1/agents/" + esc(b.getAttribute("data-agent")) + "/activate", {});
  }

  function jobPath(b) {
    return "/v1/jobs/" + esc(b.getAttribute("data-principal")) + "/" + esc(b.getAttribute("data-job"));
  }

  function stopJob(b) {
    if (window.confirm("Stop job " + b.getAttribute("data-job") + "? The runner kills its instances.")) {
      act(jobPath(b) + "/stop", {});
    }
  }

  function revertJob(b) {
    var v = parseInt(document.getElementById("revert-version").value, 10);
    if (window.confirm("Make version " + v + "'s file job " + b.getAttribute("data-job") + "'s next version?")) {
      act(jobPath(b) + "/revert", { version: v });
    }
  }

  // planText says what a submission did or would do, as allot jobs run.
  function planText(j) {
    var head = "job " + j.name + ": ";
    if (j.unchanged) {
      return head + "unchanged (version " + j.version + " runs)";
    }
    head += j.checked ? "would be version " + j.version + " (nothing submitted)" : "version " + j.version + " submitted";
    return [head].concat((j.groups || []).map(function (g) {
      var parts = [];
      [[g.keep, "kept"], [g.replace, "replaced"], [g.start, "started"], [g.stop, "stopped"]].forEach(function (p) {
        if (p[0]) {
          parts.push(p[0] + " " + p[1]);
        }
      });
      return "  group " + g.group + ": " + (parts.length ? parts.join(", ") : "nothing");
    })).join("\n");
  }

  function sendJob(check) {
    var principal = document.getElementById("job-principal").value.trim();
    var plan = document.getElementById("job-plan");
    busy = true;
    status("working...");
    plan.textContent = "";
    post("/v1/jobs/" + esc(principal), { source: document.getElementById("job-source").value, check: check },
      storedToken(), false).then(function (j) {
      busy = false;
      status("");
      plan.textContent = planText(j);
      if (!check) {
        document.getElementById("job-source").value = "";
      }
    }, function (err) {
      busy = false;
      holdUntil = Date.now() + 3 * RELOAD_MS;
      status(err.message);
    });
  }

  var actions = {
    kill: kill, teardown: teardown, drain: drain, activate: activate,
    "stop-job": stopJob, "revert-job": revertJob,
    "check-job": function () { sendJob(true); }, "submit-job": function () { sendJob(false); }
  };

  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest("button[data-action]") : null;
    if (!b || busy) {
      return;
    }
    var f = actions[b.getAttribute("data-action")];
    if (f) {
      e.preventDefault();
      f(b);
    }
  });

  function scheduleReload() {
    window.setTimeout(function () {
      var el = document.activeElement;
      var source = document.getElementById("job-source");
      var plan = document.getElementById("job-plan");
      if (busy || Date.now() < holdUntil || (el && /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName)) ||
          (source && source.value !== "") || (plan && plan.textContent !== "")) {
        scheduleReload();
        return;
      }
      window.location.reload();
    }, RELOAD_MS);
  }
  scheduleReload();
}());
