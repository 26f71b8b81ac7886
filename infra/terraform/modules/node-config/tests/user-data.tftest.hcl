# The user data the launch templates carry: everything but secrets, which it fetches at boot.

variables {
  boot = {
    region                 = "eu-west-1"
    release_url            = "s3://rookery-releases-prod/releases/rookery-1.4.0.tar.gz"
    release_sha256         = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    node_url               = "s3://rookery-releases-prod/releases/node-v24.21.0-linux-arm64.tar.xz"
    node_sha256            = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
    secret_id              = "rookery/prod/host"
    database_secret_id     = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:rds!db-1234"
    database_endpoint      = "rookery-prod.abc.eu-west-1.rds.amazonaws.com:5432"
    mirror_file_system_id  = "fs-0123456789abcdef0"
    mirror_access_point_id = "fsap-0123456789abcdef0"
    lifecycle_hook_name    = "rookery-prod-drain"
    autoscaling_group_name = "rookery-prod-host"
  }
}

run "host_user_data_holds_no_secret" {
  command = apply

  variables {
    role = "host"
  }

  assert {
    condition     = startswith(output.user_data, "#cloud-config\n")
    error_message = "The user data is a cloud-config document."
  }
  assert {
    condition     = !strcontains(output.user_data, "ROOKERY_INTERNAL_TOKEN=")
    error_message = "The user data assigns the internal token a value."
  }
  assert {
    # The one place the database URL is written is the boot script, which composes it from RDS's secret.
    condition     = length(regexall("ROOKERY_CONTROL_DATABASE_URL=", output.user_data)) == length(regexall("ROOKERY_CONTROL_DATABASE_URL=postgres://\\\\\\(\\.username\\|@uri\\):\\\\\\(\\.password\\|@uri\\)@", output.user_data))
    error_message = "The user data gives the control store's URL a value other than the one composed at boot from RDS's secret."
  }
  assert {
    condition     = !can(regex("(?i)(password|secret_access_key|BEGIN [A-Z ]*PRIVATE KEY)\\s*[:=]", output.user_data))
    error_message = "The user data holds something that looks like a credential or a private key."
  }
  assert {
    condition     = strcontains(output.user_data, "aws secretsmanager get-secret-value") && strcontains(output.user_data, "rookery/prod/host")
    error_message = "The secrets are fetched at boot with the instance role, from the role's own secret."
  }
  assert {
    condition     = strcontains(output.user_data, "for name in control/ca/ca.crt control/ca/ca.key; do")
    error_message = "The host's boot script refuses to finish without the fleet's CA from its secret (it would not start its relay)."
  }
}

run "host_user_data_stripes_nvme_mounts_the_mirror_and_drains" {
  command = apply

  variables {
    role = "host"
  }

  assert {
    condition     = strcontains(output.user_data, "mdadm --create") && strcontains(output.user_data, "nvme-Amazon_EC2_NVMe_Instance_Storage_")
    error_message = "The host stripes its instance-store NVMe disks."
  }
  assert {
    condition     = anytrue([for c in output.cloud_config.runcmd : strcontains(join(" ", c), "fs-0123456789abcdef0:/ /mnt/rookery-mirror efs _netdev,noresvport,tls,iam,accesspoint=fsap-0123456789abcdef0 0 0")])
    error_message = "The host mounts the mirror over TLS with IAM, read-write."
  }
  assert {
    condition     = strcontains(output.user_data, "host drain") && strcontains(output.user_data, "complete-lifecycle-action")
    error_message = "The termination hook drains the host, then completes."
  }
  assert {
    condition     = length([for c in output.cloud_config.runcmd : c if strcontains(join(" ", c), "sha256sum -c")]) == 2
    error_message = "Node and the release are checked against their digests before use."
  }
}

run "worker_mounts_the_mirror_read_only" {
  command = apply

  variables {
    role = "worker"
  }

  assert {
    condition     = anytrue([for c in output.cloud_config.runcmd : strcontains(join(" ", c), "efs _netdev,noresvport,tls,iam,accesspoint=fsap-0123456789abcdef0,ro 0 0")])
    error_message = "A worker mounts the mirror read-only."
  }
  assert {
    condition     = !strcontains(output.user_data, "mdadm") && !strcontains(output.user_data, "host drain")
    error_message = "Only hosts stripe disks and drain."
  }
}

run "gateway_does_not_mount_the_mirror" {
  command = apply

  variables {
    role         = "gateway"
    server_names = ["db.example.com"]
  }

  assert {
    condition     = !strcontains(output.user_data, "efs ")
    error_message = "A gateway has no business with the mirror."
  }
}

run "refuses_a_release_outside_the_releases_prefix" {
  command = plan

  variables {
    role = "worker"
    boot = {
      region             = "eu-west-1"
      release_url        = "https://example.com/rookery.tar.gz"
      release_sha256     = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      node_url           = "s3://rookery-releases-prod/releases/node.tar.xz"
      node_sha256        = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
      secret_id          = "rookery/prod/worker"
      database_secret_id = "rds!db-1234"
      database_endpoint  = "db:5432"
    }
  }

  expect_failures = [var.boot]
}

run "refuses_a_node_that_is_not_node_24" {
  command = plan

  # Every value valid but Node's version: the services need Node 24 (isolated-vm 7 loads on nothing older).
  variables {
    role = "worker"
    boot = {
      region             = "eu-west-1"
      release_url        = "s3://rookery-releases-prod/releases/rookery-1.4.0.tar.gz"
      release_sha256     = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      node_url           = "s3://rookery-releases-prod/releases/node-v22.12.0-linux-arm64.tar.xz"
      node_sha256        = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
      secret_id          = "rookery/prod/worker"
      database_secret_id = "rds!db-1234"
      database_endpoint  = "db:5432"
    }
  }

  expect_failures = [var.boot]
}
