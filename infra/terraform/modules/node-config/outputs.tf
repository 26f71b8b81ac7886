output "environment" {
  description = "The rendered non-secret environment, by variable name."
  value       = local.environment
}

output "env_file" {
  description = "The environment file's path and content."
  value       = { path = local.env_file_path, content = terraform_data.validated.output }
}

output "unit" {
  description = "The systemd unit's name and content."
  value       = { name = local.unit_name, content = local.unit }
}

output "instance_env_files" {
  description = "Per host (key: <role>-<id>): the instance environment file's content, when ids were given."
  value       = local.instance_files
}

output "secret_variables" {
  description = "The variables the node reads from the secrets file, which the boot script writes from Secrets Manager."
  value       = local.secret_variables[var.role]
}

output "health_port" {
  description = "Gateway: the port of its health check (GET /healthz over HTTP) for the load balancer; null for other roles or when none."
  value       = var.role == "gateway" ? var.health_port : null
}

output "raven_tcp_port" {
  description = "Gateway: the port of the RavenDB TCP listener, which its load balancer passes through; null for other roles or when off."
  value       = var.role == "gateway" ? var.raven_tcp_port : null
}

output "secret_files" {
  description = "The files the node reads from its role's secret (`files`), by where they are written (the data directory) → their name in the secret. Never rendered: the boot script writes them (and refuses to finish without them), a local fleet's harness copies them."
  value       = { for name in local.secret_files[var.role] : "${var.data_dir}/${name}" => name }
}

output "secrets_env_file" {
  description = "Where the secret variables are read from."
  value       = var.secrets_env_file
}

output "instance_env_file" {
  description = "Where the per-instance variables are read from."
  value       = var.instance_env_file
}

output "known_variables" {
  description = "Every variable the role's service reads (for the drift check against services/*/src/config.ts)."
  value       = local.known_variables[var.role]
}

output "cloud_config" {
  description = "The user data as an object (what tests and reviewers read; user_data is its YAML)."
  value       = local.cloud_config
}

output "user_data" {
  description = "The instance's cloud-init user data on AWS (null without var.boot). It holds no secret."
  value       = local.user_data
}
