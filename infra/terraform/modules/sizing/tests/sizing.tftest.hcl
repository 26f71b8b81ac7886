run "prod_control_store_is_multi_az_encrypted_and_protected" {
  command = apply

  variables {
    environment = "prod"
  }

  assert {
    condition     = output.control.multi_az && output.control.storage_encrypted && output.control.deletion_protection
    error_message = "prod's PostgreSQL must be Multi-AZ, encrypted and protected from deletion."
  }
  assert {
    condition     = output.control.backup_retention_days >= 7
    error_message = "prod keeps at least a week of PostgreSQL backups."
  }
  assert {
    condition     = output.zones == 3 && output.gateway.min >= 3 && output.host.min >= 3
    error_message = "prod spreads over three zones with a gateway and a host in each."
  }
}

run "every_environment_encrypts_the_control_store" {
  command = apply

  variables {
    environment = "staging"
  }

  assert {
    condition     = output.control.storage_encrypted
    error_message = "Encryption at rest is not optional, in staging either."
  }
}

run "host_instance_types_are_nvme_families" {
  command = apply

  variables {
    environment = "prod"
  }

  assert {
    condition     = can(regex("^(i4i|i4g|i7ie|i8g|im4gn|is4gen|c5d|c6id|c6gd|c7gd|m5d|m6id|m6gd|m7gd|r5d|r6id|r6gd|r7gd|x2idn)\\.", output.host.instance_type))
    error_message = "Hosts keep tenants on instance-store NVMe."
  }
}

run "refuses_a_host_type_without_nvme" {
  command = plan

  variables {
    environment        = "prod"
    host_instance_type = "m7g.xlarge"
  }

  expect_failures = [var.host_instance_type]
}

run "hosts_hold_every_tenant_with_one_host_lost" {
  command = apply

  variables {
    environment        = "prod"
    host_instance_type = "i4i.xlarge"
    tenants            = 2000
    awake_fraction     = 0.1
    tenant_memory_mb   = 1024
  }

  # i4i.xlarge: 32 GiB - 2 GiB reserved = 30 awake tenants of 1 GiB → 300 placed per host;
  # 2,000 tenants need 7 hosts, plus one to fail over to.
  assert {
    condition     = output.host.awake_per_host == 30 && output.host.capacity == 300
    error_message = "Expected 30 awake and 300 placed tenants per i4i.xlarge host, got ${output.host.awake_per_host} and ${output.host.capacity}."
  }
  assert {
    condition     = output.host.desired == 8
    error_message = "Expected 8 hosts (7 for 2,000 tenants, plus one), got ${output.host.desired}."
  }
}

run "a_small_fleet_still_has_three_hosts" {
  command = apply

  variables {
    environment = "staging"
    tenants     = 1
  }

  assert {
    condition     = output.host.desired == 3
    error_message = "Fewer than three hosts leaves the reaper's majority guard meaningless."
  }
}

run "refuses_a_tenant_larger_than_the_host" {
  command = plan

  variables {
    environment      = "staging"
    tenant_memory_mb = 8192
  }

  expect_failures = [terraform_data.checked]
}
