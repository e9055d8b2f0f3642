// The web UI's operator actions (master/ui.go): kill a task, tear a
// framework down, drain an agent (with an optional deadline) or activate
// it. Each is a POST to the operator API; it carries the operator token as
// "Authorization: Bearer <token>" once one was given. A 401 asks for the
// token (window.prompt) and keeps it in sessionStorage, for this tab only.
// The page reloads every 5 s, except while an action or an input is busy.
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

  var actions = { kill: kill, teardown: teardown, drain: drain, activate: activate };

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
      if (busy || Date.now() < holdUntil || (el && el.tagName === "INPUT")) {
        scheduleReload();
        return;
      }
      window.location.reload();
    }, RELOAD_MS);
  }
  scheduleReload();
}());
