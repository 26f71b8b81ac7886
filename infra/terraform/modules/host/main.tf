# The hosts: tenant processes on instance-store NVMe (striped into the data directory by the user
# data), the mirror on EFS, and a termination hook that drains each host (`rookery host drain`)
# before the group lets it go, so scale-in and rolling upgrades move tenants instead of failing them.

locals {
  group_name = "${var.name}-host"
  drain_hook = "${var.name}-drain"
}

module "fleet" {
  source = "../fleet"

  name                 = local.group_name
  image_id             = var.image_id
  instance_type        = var.instance_type
  subnet_ids           = var.private_subnets
  vpc_id               = var.vpc_id
  vpc_cidr_block       = var.vpc_cidr_block
  s3_prefix_list_id    = var.s3_prefix_list_id
  egress_ports_in_vpc  = { endpoints = 443, database = 5432, mirror = 2049 }
  instance_profile_arn = var.instance_profile_arn
  user_data            = var.user_data
  min_size             = var.min_size
  max_size             = var.max_size
  desired_capacity     = var.desired_capacity
  kms_key_arn          = var.kms_key_arn
  # A rolling upgrade replaces one host at a time: each is drained by its hook first.
  instance_refresh_min_healthy_percentage = 100 - floor(100 / max(var.min_size, 1))
  tags                                    = var.tags

  initial_lifecycle_hooks = [{
    name                 = local.drain_hook
    lifecycle_transition = "autoscaling:EC2_INSTANCE_TERMINATING"
    heartbeat_timeout    = var.drain_timeout_seconds
    # A host that could not finish its drain still goes: its lease lapses and the reaper re-places the rest.
    default_result = "CONTINUE"
  }]
}

resource "aws_vpc_security_group_ingress_rule" "clients" {
  for_each = {
    relay    = { port = var.relay_port, from = var.gateway_security_group_id, who = "gateways (mutual TLS)" }
    internal = { port = var.host_port, from = var.worker_security_group_id, who = "workers (internal API)" }
  }
  security_group_id            = module.fleet.security_group_id
  description                  = "The host's ${each.key} port from the ${each.value.who}"
  ip_protocol                  = "tcp"
  from_port                    = each.value.port
  to_port                      = each.value.port
  referenced_security_group_id = each.value.from
}
