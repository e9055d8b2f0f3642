# A batch job: eight instances of a command that each finish; one that
# fails is run again, up to twice, and the job fails when they run out.
job "checksums" {
  type        = "batch"
  role        = "eng/batch"
  constraints = ["rack in r1,r2"]

  group "hash" {
    count = 8

    restart {
      attempts = 2
      interval = "1h"
      delay    = "1s"
      mode     = "fail"
    }

    task "sha" {
      shell   = true
      command = "head -c 10000000 /dev/urandom | sha256sum"

      resources {
        cpus = 0.5
        mem  = "32M"
      }
    }
  }
}
