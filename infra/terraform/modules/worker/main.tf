# The workers: backups from the mirror (read-only EFS mount) to the backups bucket, restores,
# sweeps, purges. No ingress at all: their /metrics is scraped by the agent on the same instance.

module "fleet" {
  source = "../fleet"

  name                 = "${var.name}-worker"
  image_id             = var.image_id
  instance_type        = var.instance_type
  subnet_ids           = var.private_subnets
  vpc_id               = var.vpc_id
  vpc_cidr_block       = var.vpc_cidr_block
  s3_prefix_list_id    = var.s3_prefix_list_id
  egress_ports_in_vpc  = { endpoints = 443, database = 5432, mirror = 2049, hosts = var.host_port }
  instance_profile_arn = var.instance_profile_arn
  user_data            = var.user_data
  min_size             = var.min_size
  max_size             = var.max_size
  desired_capacity     = var.desired_capacity
  kms_key_arn          = var.kms_key_arn
  tags                 = var.tags
}
