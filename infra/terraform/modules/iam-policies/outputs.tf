output "policies" {
  description = "Per role (gateway, host, worker): its IAM policy document as JSON."
  value       = { for role, doc in local.documents : role => jsonencode(doc) }
}

output "assume_role_policy" {
  description = "The trust policy of the node roles: EC2 instances only."
  value       = jsonencode(local.assume_role)
}
