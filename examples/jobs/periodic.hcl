# A periodic batch job: every five minutes, unless the last run is still
# going.
job "report" {
  type = "batch"

  periodic {
    cron             = "*/5 * * * *"
    prohibit_overlap = true
  }

  group "report" {
    task "summarise" {
      command = "/bin/sh"
      args    = ["-c", "date; uptime"]
    }
  }
}
