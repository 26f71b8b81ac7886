output "security_group_id" {
  description = "The hosts' security group."
  value       = module.fleet.security_group_id
}

output "autoscaling_group_name" {
  description = "The hosts' group."
  value       = module.fleet.autoscaling_group_name
}

output "drain_hook_name" {
  description = "The termination hook the hosts complete once drained."
  value       = local.drain_hook
}

output "host_port" {
  description = "The hosts' internal API port: the workers' egress to it."
  value       = var.host_port
}
