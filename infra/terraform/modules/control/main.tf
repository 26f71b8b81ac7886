# The control store: one RDS PostgreSQL instance (Multi-AZ in prod) holding control state, the job
# queue, hosts' leases and tenants' placements. Encrypted, TLS forced, master password managed by
# RDS in Secrets Manager (rotated there; the nodes compose their URL from it at each start).

resource "aws_security_group" "this" {
  name        = "${var.name}-control"
  description = "The control store: PostgreSQL from Rookery nodes only"
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "postgres" {
  for_each                     = var.client_security_group_ids
  security_group_id            = aws_security_group.this.id
  description                  = "PostgreSQL from the ${each.key}"
  ip_protocol                  = "tcp"
  from_port                    = 5432
  to_port                      = 5432
  referenced_security_group_id = each.value
}

resource "aws_db_parameter_group" "this" {
  name_prefix = "${var.name}-control-"
  family      = "postgres${var.engine_version}"
  description = "Rookery control store: TLS only, logged connections"
  tags        = var.tags

  parameter {
    name  = "rds.force_ssl"
    value = "1"
  }

  parameter {
    name  = "log_connections"
    value = "1"
  }

  parameter {
    name  = "log_disconnections"
    value = "1"
  }

  lifecycle {
    create_before_destroy = true
  }
}

resource "aws_db_instance" "this" {
  identifier     = "${var.name}-control"
  engine         = "postgres"
  engine_version = var.engine_version
  instance_class = var.instance_class
  db_name        = "rookery"
  username       = "rookery"

  manage_master_user_password   = true
  master_user_secret_kms_key_id = var.kms_key_arn

  allocated_storage     = var.allocated_storage_gb
  max_allocated_storage = var.allocated_storage_gb * 4
  storage_type          = "gp3"
  storage_encrypted     = true
  kms_key_id            = var.kms_key_arn

  multi_az               = var.multi_az
  db_subnet_group_name   = var.database_subnet_group_name
  vpc_security_group_ids = [aws_security_group.this.id]
  publicly_accessible    = false
  parameter_group_name   = aws_db_parameter_group.this.name

  deletion_protection       = var.deletion_protection
  skip_final_snapshot       = false
  final_snapshot_identifier = "${var.name}-control-final"
  backup_retention_period   = var.backup_retention_days
  copy_tags_to_snapshot     = true

  auto_minor_version_upgrade          = true
  iam_database_authentication_enabled = true
  enabled_cloudwatch_logs_exports     = ["postgresql", "upgrade"]

  performance_insights_enabled    = true
  performance_insights_kms_key_id = var.kms_key_arn
  monitoring_interval             = 30
  monitoring_role_arn             = var.monitoring_role_arn

  tags = var.tags
}
