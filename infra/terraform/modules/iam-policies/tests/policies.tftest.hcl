variables {
  bucket_arns = {
    backups  = "arn:aws:s3:::rookery-backups-test"
    releases = "arn:aws:s3:::rookery-releases-test"
  }
  kms_key_arns = {
    backups = "arn:aws:kms:eu-west-1:111122223333:key/11111111-2222-3333-4444-555555555555"
    secrets = "arn:aws:kms:eu-west-1:111122223333:key/66666666-7777-8888-9999-000000000000"
  }
  mirror_file_system_arn     = "arn:aws:elasticfilesystem:eu-west-1:111122223333:file-system/fs-0123456789abcdef0"
  prometheus_workspace_arn   = "arn:aws:aps:eu-west-1:111122223333:workspace/ws-0123"
  host_autoscaling_group_arn = "arn:aws:autoscaling:eu-west-1:111122223333:autoScalingGroup:*:autoScalingGroupName/rookery-test-host"
  secret_arns = {
    gateway = ["arn:aws:secretsmanager:eu-west-1:111122223333:secret:rookery-test/gateway-AbCdEf"]
    host    = ["arn:aws:secretsmanager:eu-west-1:111122223333:secret:rookery-test/host-AbCdEf"]
    worker  = ["arn:aws:secretsmanager:eu-west-1:111122223333:secret:rookery-test/worker-AbCdEf"]
  }
  log_group_arns = {
    gateway = "arn:aws:logs:eu-west-1:111122223333:log-group:/rookery/test/gateway"
    host    = "arn:aws:logs:eu-west-1:111122223333:log-group:/rookery/test/host"
    worker  = "arn:aws:logs:eu-west-1:111122223333:log-group:/rookery/test/worker"
  }
}

run "no_wildcard_actions_and_no_star_resources_except_describes" {
  command = apply

  assert {
    condition = alltrue(flatten([
      for role, doc in output.policies : [
        for s in jsondecode(doc).Statement : [for a in s.Action : !strcontains(a, "*")]
      ]
    ]))
    error_message = "A statement allows a wildcard action."
  }
  assert {
    condition = alltrue(flatten([
      for role, doc in output.policies : [
        for s in jsondecode(doc).Statement :
        !contains(s.Resource, "*") || alltrue([for a in s.Action : can(regex("^[a-z0-9-]+:Describe", a))])
      ]
    ]))
    error_message = "A statement other than a describe allows every resource (\"*\")."
  }
  assert {
    condition     = alltrue([for doc in values(output.policies) : alltrue([for s in jsondecode(doc).Statement : s.Effect == "Allow" && length(s.Resource) > 0])])
    error_message = "Every statement names its resources."
  }
}

run "only_workers_may_write_backups" {
  command = apply

  assert {
    condition = alltrue(flatten([
      for role in ["gateway", "host"] : [
        for s in jsondecode(output.policies[role]).Statement : [for a in s.Action : !can(regex("^s3:(Put|Delete|Abort|Restore|Replicate)", a))]
      ]
    ]))
    error_message = "A role other than the worker may write or delete backups."
  }
  assert {
    condition     = contains(flatten([for s in jsondecode(output.policies.worker).Statement : s.Action]), "s3:PutObject")
    error_message = "The worker writes backups."
  }
}

run "gateway_has_no_s3_access_but_its_release_and_no_mirror" {
  command = apply

  assert {
    condition = alltrue([
      for s in jsondecode(output.policies.gateway).Statement :
      alltrue([for a in s.Action : !startswith(a, "s3:") || (a == "s3:GetObject" && s.Resource == ["arn:aws:s3:::rookery-releases-test/releases/*"])])
    ])
    error_message = "The gateway's only S3 access is reading the release it boots (releases/ prefix of the release bucket)."
  }
  assert {
    condition     = alltrue([for s in jsondecode(output.policies.gateway).Statement : alltrue([for a in s.Action : !startswith(a, "elasticfilesystem:")])])
    error_message = "The gateway has no access to the mirror."
  }
  assert {
    condition     = !strcontains(output.policies.gateway, "rookery-backups-test")
    error_message = "The gateway's policy names the backups bucket."
  }
}

run "workers_mount_the_mirror_read_only" {
  command = apply

  assert {
    condition     = !contains(flatten([for s in jsondecode(output.policies.worker).Statement : s.Action]), "elasticfilesystem:ClientWrite")
    error_message = "A worker may not write the mirror."
  }
  assert {
    condition     = contains(flatten([for s in jsondecode(output.policies.host).Statement : s.Action]), "elasticfilesystem:ClientWrite")
    error_message = "Hosts write the mirror."
  }
}

run "each_role_reads_only_its_own_secrets" {
  command = apply

  assert {
    condition = alltrue([
      for role in ["gateway", "host", "worker"] : alltrue([
        for s in jsondecode(output.policies[role]).Statement :
        s.Sid != "ReadOwnSecrets" || alltrue([for r in s.Resource : strcontains(r, "rookery-test/${role}-")])
      ])
    ])
    error_message = "A role may read another role's secrets."
  }
}

run "instances_only_assume_the_roles" {
  command = apply

  assert {
    condition     = jsondecode(output.assume_role_policy).Statement[0].Principal.Service == "ec2.amazonaws.com"
    error_message = "Only EC2 instances assume the node roles."
  }
}

run "refuses_a_wildcard_secret" {
  command = plan

  variables {
    secret_arns = { gateway = ["arn:aws:secretsmanager:eu-west-1:111122223333:secret:*"] }
  }

  expect_failures = [var.secret_arns]
}

run "refuses_a_bucket_that_is_not_an_s3_arn" {
  command = plan

  variables {
    bucket_arns = {
      backups  = "arn:aws:s3:::rookery-backups-test"
      releases = "arn:aws:s3:::rookery-releases-test/releases/*"
    }
  }

  expect_failures = [var.bucket_arns]
}

run "refuses_a_key_that_is_not_a_kms_arn" {
  command = plan

  variables {
    kms_key_arns = {
      backups = "arn:aws:kms:eu-west-1:111122223333:key/11111111-2222-3333-4444-555555555555"
      secrets = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:x"
    }
  }

  expect_failures = [var.kms_key_arns]
}
