output "dns_name" {
  description = "The load balancer's DNS name: point the public name (a CNAME or alias) at it."
  value       = aws_lb.this.dns_name
}

output "load_balancer_arn_suffix" {
  description = "For CloudWatch alarms."
  value       = aws_lb.this.arn_suffix
}

output "target_group_arn_suffix" {
  description = "For CloudWatch alarms."
  value       = aws_lb_target_group.gateway["https"].arn_suffix
}

output "security_group_id" {
  description = "The gateways' security group."
  value       = module.fleet.security_group_id
}

output "autoscaling_group_name" {
  description = "The gateways' group."
  value       = module.fleet.autoscaling_group_name
}
