# A web service of three instances, each on a different agent, checked
# over HTTP, replaced one at a time when the file changes, and put back on
# the last good version when a new one never becomes healthy.
job "web" {
  type = "service"
  role = "eng/prod"

  update {
    max_parallel     = 1
    min_healthy_time = "5s"
    healthy_deadline = "2m"
    auto_revert      = true
  }

  group "frontend" {
    count       = 3
    constraints = ["hostname unique"]
    spread      = ["rack"]

    restart {
      attempts = 3
      interval = "10m"
      delay    = "2s"
      backoff  = 2
      mode     = "delay"
    }

    task "server" {
      shell   = true
      command = "exec python3 -m http.server $PORT0 --bind 127.0.0.1"
      env     = { PYTHONUNBUFFERED = "1" }

      resources {
        cpus  = 0.25
        mem   = "64M"
        ports = 1
      }

      check {
        type     = "http"
        port     = 0
        path     = "/"
        interval = "2s"
        timeout  = "1s"
      }
    }
  }
}
