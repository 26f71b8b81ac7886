# The whole AWS deployment of one environment: the modules wired together. envs/aws calls it with an
# environment's tfvars (envs/prod/prod.tfvars, envs/staging/staging.tfvars); everything here is the same for both.

locals {
  name = "rookery-${var.environment}"
  tags = merge(var.tags, { Project = "rookery", Environment = var.environment })
}

module "sizing" {
  source             = "../sizing"
  environment        = var.environment
  tenants            = var.tenants
  host_instance_type = var.host_instance_type
}

module "storage" {
  source = "../storage"
  name   = local.name
  tags   = local.tags
}

module "network" {
  source             = "../network"
  name               = local.name
  cidr               = var.vpc_cidr
  azs                = var.azs
  single_nat_gateway = var.environment != "prod"
  kms_key_arn        = module.storage.platform_kms_key_arn
  tags               = local.tags
}

module "observability" {
  source                   = "../observability"
  name                     = local.name
  log_retention_days       = module.sizing.log_retention_days
  kms_key_arn              = module.storage.platform_kms_key_arn
  alarm_emails             = var.alarm_emails
  load_balancer_arn_suffix = module.gateway.load_balancer_arn_suffix
  target_group_arn_suffix  = module.gateway.target_group_arn_suffix
  db_instance_identifier   = module.control.instance_identifier
  tags                     = local.tags
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

module "iam_policies" {
  source                   = "../iam-policies"
  bucket_arns              = { backups = module.storage.backup_bucket_arn, releases = module.storage.release_bucket_arn }
  kms_key_arns             = { backups = module.storage.backup_kms_key_arn, secrets = module.storage.platform_kms_key_arn }
  mirror_file_system_arn   = module.mirror.file_system_arn
  prometheus_workspace_arn = module.observability.prometheus_workspace_arn
  log_group_arns           = module.observability.log_group_arns
  # The database secret is RDS's own: every role composes its URL from it.
  secret_arns = { for role, arn in module.iam.secret_arns : role => [arn, module.control.master_user_secret_arn] }
  # Built from the group's name: the group's own ARN would make the policy wait for the group it launches.
  host_autoscaling_group_arn = "arn:${data.aws_partition.current.partition}:autoscaling:${var.region}:${data.aws_caller_identity.current.account_id}:autoScalingGroup:*:autoScalingGroupName/${local.name}-host"
}

module "iam" {
  source             = "../iam"
  name               = local.name
  policies           = module.iam_policies.policies
  assume_role_policy = module.iam_policies.assume_role_policy
  kms_key_arn        = module.storage.platform_kms_key_arn
  tags               = local.tags
}

module "control" {
  source                     = "../control"
  name                       = local.name
  vpc_id                     = module.network.vpc_id
  database_subnet_group_name = module.network.database_subnet_group_name
  client_security_group_ids = {
    gateways = module.gateway.security_group_id
    hosts    = module.host.security_group_id
    workers  = module.worker.security_group_id
  }
  instance_class        = module.sizing.control.instance_class
  allocated_storage_gb  = module.sizing.control.allocated_storage_gb
  multi_az              = module.sizing.control.multi_az
  deletion_protection   = module.sizing.control.deletion_protection
  backup_retention_days = module.sizing.control.backup_retention_days
  kms_key_arn           = module.storage.platform_kms_key_arn
  monitoring_role_arn   = module.iam.rds_monitoring_role_arn
  tags                  = local.tags
}

module "mirror" {
  source                   = "../mirror"
  name                     = local.name
  vpc_id                   = module.network.vpc_id
  private_subnets          = module.network.private_subnets
  kms_key_arn              = module.storage.platform_kms_key_arn
  writer_security_group_id = module.host.security_group_id
  reader_security_group_id = module.worker.security_group_id
  writer_role_arn          = module.iam.role_arns.host
  reader_role_arn          = module.iam.role_arns.worker
  tags                     = local.tags
}

locals {
  boot = {
    region                 = var.region
    release_url            = "s3://${module.storage.release_bucket_name}/releases/${var.release.artifact_key}"
    release_sha256         = var.release.artifact_sha256
    node_url               = "s3://${module.storage.release_bucket_name}/releases/${var.release.node_key}"
    node_sha256            = var.release.node_sha256
    database_secret_id     = module.control.master_user_secret_arn
    database_endpoint      = module.control.endpoint
    mirror_file_system_id  = module.mirror.file_system_id
    mirror_access_point_id = module.mirror.access_point_id
  }
}

module "gateway_config" {
  source       = "../node-config"
  role         = "gateway"
  server_names = var.public_names
  boot         = merge(local.boot, { secret_id = module.iam.secret_names.gateway })
}

module "host_config" {
  source        = "../node-config"
  role          = "host"
  host_capacity = module.sizing.host.capacity
  settings = {
    ROOKERY_MIRROR_MODE      = var.mirror_mode
    ROOKERY_TENANT_MEMORY_MB = tostring(module.sizing.host.tenant_memory_mb)
  }
  boot = merge(local.boot, {
    secret_id              = module.iam.secret_names.host
    lifecycle_hook_name    = "${local.name}-drain"
    autoscaling_group_name = "${local.name}-host"
  })
}

module "worker_config" {
  source        = "../node-config"
  role          = "worker"
  region        = var.region
  backup_s3_url = "s3://${module.storage.backup_bucket_name}/backups"
  boot          = merge(local.boot, { secret_id = module.iam.secret_names.worker })
}

module "gateway" {
  source               = "../gateway"
  name                 = local.name
  vpc_id               = module.network.vpc_id
  vpc_cidr_block       = module.network.vpc_cidr_block
  s3_prefix_list_id    = module.network.s3_prefix_list_id
  public_subnets       = module.network.public_subnets
  private_subnets      = module.network.private_subnets
  allowed_cidrs        = var.allowed_cidrs
  image_id             = var.image_id
  instance_type        = module.sizing.gateway.instance_type
  min_size             = module.sizing.gateway.min
  max_size             = module.sizing.gateway.max
  desired_capacity     = module.sizing.gateway.desired
  instance_profile_arn = module.iam.instance_profile_arns.gateway
  user_data            = module.gateway_config.user_data
  health_check_port    = module.gateway_config.health_port
  raven_tcp_port       = module.gateway_config.raven_tcp_port
  kms_key_arn          = module.storage.platform_kms_key_arn
  deletion_protection  = var.environment == "prod"
  access_logs_bucket   = module.storage.logs_bucket_name
  tags                 = local.tags
}

module "host" {
  source                    = "../host"
  name                      = local.name
  vpc_id                    = module.network.vpc_id
  vpc_cidr_block            = module.network.vpc_cidr_block
  s3_prefix_list_id         = module.network.s3_prefix_list_id
  private_subnets           = module.network.private_subnets
  gateway_security_group_id = module.gateway.security_group_id
  worker_security_group_id  = module.worker.security_group_id
  image_id                  = var.image_id
  instance_type             = module.sizing.host.instance_type
  min_size                  = module.sizing.host.min
  max_size                  = module.sizing.host.max
  desired_capacity          = module.sizing.host.desired
  instance_profile_arn      = module.iam.instance_profile_arns.host
  user_data                 = module.host_config.user_data
  kms_key_arn               = module.storage.platform_kms_key_arn
  tags                      = local.tags
}

# The workers: backups from the mirror (read-only EFS mount) to the backups bucket, restores, sweeps,
# purges. They have no resource of their own (no ingress at all: their /metrics is scraped by the
# agent on the same instance), so they are the fleet module alone.
module "worker" {
  source               = "../fleet"
  name                 = "${local.name}-worker"
  vpc_id               = module.network.vpc_id
  vpc_cidr_block       = module.network.vpc_cidr_block
  s3_prefix_list_id    = module.network.s3_prefix_list_id
  subnet_ids           = module.network.private_subnets
  egress_ports_in_vpc  = { endpoints = 443, database = 5432, mirror = 2049, hosts = module.host.host_port }
  image_id             = var.image_id
  instance_type        = module.sizing.worker.instance_type
  min_size             = module.sizing.worker.min
  max_size             = module.sizing.worker.max
  desired_capacity     = module.sizing.worker.desired
  instance_profile_arn = module.iam.instance_profile_arns.worker
  user_data            = module.worker_config.user_data
  kms_key_arn          = module.storage.platform_kms_key_arn
  tags                 = local.tags
}
