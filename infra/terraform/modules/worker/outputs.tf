output "security_group_id" {
  description = "The workers' security group."
  value       = module.fleet.security_group_id
}

output "autoscaling_group_name" {
  description = "The workers' group."
  value       = module.fleet.autoscaling_group_name
}
