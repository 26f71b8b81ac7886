# The rendered configuration of each role: what the AWS user data writes and the local fleet runs.

run "gateway_renders_only_variables_the_gateway_reads" {
  command = apply

  variables {
    role         = "gateway"
    server_names = ["db.example.com"]
  }

  assert {
    condition     = output.environment.ROOKERY_GATEWAY_ROUTING == "fleet" && !contains(keys(output.environment), "ROOKERY_HOST_URL")
    error_message = "A fleet's gateway routes by placement, to no single host."
  }

  assert {
    condition     = length(setsubtract(keys(output.environment), output.known_variables)) == 0
    error_message = "The gateway's environment names a variable services/gateway/src/config.ts does not read."
  }
  assert {
    condition     = output.environment.ROOKERY_GATEWAY_NAMES == "db.example.com" && output.environment.ROOKERY_GATEWAY_PORT == "8443"
    error_message = "The gateway listens on 8443 (the load balancer's 443 passes through to it) with its certificate names."
  }
  assert {
    condition     = output.environment.ROOKERY_RAVEN_TCP_PORT == "38888" && output.raven_tcp_port == 38888
    error_message = "The gateway serves RavenDB's TCP protocol on 38888, the port its load balancer passes through."
  }
  assert {
    condition     = output.env_file.path == "/etc/rookery/gateway.env" && strcontains(output.env_file.content, "\nROOKERY_GATEWAY_HOST=0.0.0.0\n")
    error_message = "The env file is /etc/rookery/gateway.env with one KEY=value line per variable."
  }
  assert {
    condition     = strcontains(output.unit.content, "EnvironmentFile=/run/rookery/secrets.env") && strcontains(output.unit.content, "ExecStart=/opt/node-24/bin/node --no-node-snapshot --max-semi-space-size=16 --enable-source-maps services/gateway/dist/main.js")
    error_message = "The unit reads the secrets file written at boot and runs the gateway's build with Node 24 and the services' flags."
  }
  assert {
    condition     = !strcontains(output.unit.content, "instance.env")
    error_message = "Only a host reads an instance file: a gateway's unit must not pick up a host's id."
  }
  assert {
    condition     = output.secret_files == { "/var/lib/rookery/control/ca/ca.crt" = "control/ca/ca.crt", "/var/lib/rookery/control/ca/ca.key" = "control/ca/ca.key", "/var/lib/rookery/control/master.key" = "control/master.key" }
    error_message = "A gateway reads the fleet's CA and master key from its secret's files, under its data directory (else it makes its own and trusts no fleet certificate)."
  }
  assert {
    condition     = !strcontains(output.unit.content, "Delegate=yes") && !strcontains(output.unit.content, "/mnt/rookery-mirror")
    error_message = "A gateway neither delegates cgroups nor touches the mirror."
  }
}

run "no_secret_is_rendered_for_any_role" {
  command = apply

  variables {
    role     = "worker"
    host_url = "http://10.0.1.10:8081"
  }

  assert {
    condition     = length(setintersection(keys(output.environment), output.secret_variables)) == 0
    error_message = "A secret variable was rendered into the environment file."
  }
  assert {
    condition     = !strcontains(output.env_file.content, "ROOKERY_INTERNAL_TOKEN=") && !strcontains(output.env_file.content, "ROOKERY_CONTROL_DATABASE_URL=")
    error_message = "The env file assigns a secret."
  }
  assert {
    condition     = contains(output.secret_variables, "ROOKERY_INTERNAL_TOKEN") && contains(output.secret_variables, "ROOKERY_CONTROL_DATABASE_URL")
    error_message = "The token and the database URL are read from the secrets file."
  }
}

run "refuses_a_secret_given_as_a_setting" {
  command = plan

  variables {
    role     = "host"
    settings = { ROOKERY_INTERNAL_TOKEN = "0123456789abcdef0123" }
  }

  expect_failures = [var.settings]
}

run "refuses_credentials_in_a_url" {
  command = plan

  variables {
    role     = "worker"
    settings = { ROOKERY_BACKUP_S3_ENDPOINT = "https://key:secret@minio.internal:9000" }
  }

  expect_failures = [var.settings]
}

run "refuses_a_value_that_needs_quoting" {
  command = plan

  variables {
    role     = "host"
    settings = { ROOKERY_MIRROR_MODE = "sync; rm -rf /" }
  }

  expect_failures = [var.settings]
}

run "refuses_a_variable_the_role_does_not_read" {
  command = plan

  variables {
    role     = "worker"
    settings = { ROOKERY_GATEWAY_PORT = "443" }
  }

  expect_failures = [terraform_data.validated]
}

run "host_mounts_the_mirror_read_write_and_delegates_cgroups" {
  command = apply

  variables {
    role     = "host"
    settings = { ROOKERY_MIRROR_MODE = "sync", ROOKERY_SHUTDOWN_DEADLINE_MS = "20000" }
  }

  assert {
    condition     = output.environment.ROOKERY_MIRROR == "/mnt/rookery-mirror" && output.environment.ROOKERY_MIRROR_MODE == "sync"
    error_message = "The host mirrors to the shared network disk, in the mode asked."
  }
  assert {
    condition     = strcontains(output.unit.content, "ReadWritePaths=/var/lib/rookery /mnt/rookery-mirror") && strcontains(output.unit.content, "Delegate=yes")
    error_message = "The host writes its data directory and the mirror, and owns its cgroup subtree."
  }
  assert {
    condition     = strcontains(output.unit.content, "TimeoutStopSec=30\n")
    error_message = "systemd waits the host's shutdown deadline (20 s) and 10 s more before it kills."
  }
  assert {
    condition     = strcontains(output.unit.content, "RequiresMountsFor=/var/lib/rookery /mnt/rookery-mirror")
    error_message = "The host starts only once its data array and the mirror are mounted."
  }
}

run "worker_reads_the_mirror_read_only" {
  command = apply

  variables {
    role          = "worker"
    backup_s3_url = "s3://rookery-backups-prod/backups"
    region        = "eu-west-1"
  }

  assert {
    condition     = strcontains(output.unit.content, "ReadOnlyPaths=/mnt/rookery-mirror") && !strcontains(output.unit.content, "ReadWritePaths=/var/lib/rookery /mnt/rookery-mirror")
    error_message = "A worker reads the mirror and never writes it."
  }
  assert {
    condition     = output.environment.ROOKERY_BACKUP_S3_URL == "s3://rookery-backups-prod/backups" && output.environment.ROOKERY_BACKUP_S3_REGION == "eu-west-1"
    error_message = "The worker writes backups to the bucket, in the region."
  }
}

run "per_host_files_carry_the_id_and_address" {
  command = apply

  variables {
    role = "host"
    hosts = [
      { id = "host-1", advertise_url = "https://127.0.0.1:19101", relay_name = "127.0.0.1" },
      { id = "host-2", advertise_url = "https://127.0.0.1:19102", relay_name = "127.0.0.1" },
    ]
  }

  assert {
    condition     = output.instance_env_files["host-host-2"] == "ROOKERY_HOST_ID=host-2\nROOKERY_HOST_ADVERTISE_URL=https://127.0.0.1:19102\nROOKERY_HOST_RELAY_NAMES=127.0.0.1\n"
    error_message = "Each host gets its own id and advertised URL."
  }
  assert {
    condition     = !contains(keys(output.environment), "ROOKERY_HOST_ID")
    error_message = "The shared env file carries no host id."
  }
}

run "refuses_a_host_id_in_shared_settings" {
  command = plan

  variables {
    role     = "host"
    settings = { ROOKERY_HOST_ID = "host-1" }
  }

  expect_failures = [terraform_data.validated]
}

run "gateway_needs_server_names" {
  command = plan

  variables {
    role = "gateway"
  }

  expect_failures = [terraform_data.validated]
}
