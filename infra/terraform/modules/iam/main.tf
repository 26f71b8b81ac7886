# One IAM role per fleet with exactly the policy iam-policies built (and proved least-privilege with
# `tofu test`), its instance profile, and the role's secret in Secrets Manager. The secrets' values
# are put there by an operator (docs/operations.md, "Secrets"), never by Terraform: no secret is in
# the state either.

locals {
  roles = toset(["gateway", "host", "worker"])
}

resource "aws_iam_role" "node" {
  for_each             = local.roles
  name                 = "${var.name}-${each.key}"
  assume_role_policy   = var.assume_role_policy
  max_session_duration = 3600
  tags                 = var.tags
}

resource "aws_iam_role_policy" "node" {
  for_each = local.roles
  name     = "rookery-${each.key}"
  role     = aws_iam_role.node[each.key].id
  policy   = var.policies[each.key]
}

resource "aws_iam_instance_profile" "node" {
  for_each = local.roles
  name     = "${var.name}-${each.key}"
  role     = aws_iam_role.node[each.key].name
  tags     = var.tags
}

# {"env": {"ROOKERY_INTERNAL_TOKEN": "…"}, "files": {"control/master.key": "<base64>", …}}
resource "aws_secretsmanager_secret" "node" {
  #checkov:skip=CKV2_AWS_57:These hold the CA, the master key and the internal token: rotating them is an operator's procedure (docs/operations.md, "Rotate the server certificate and the CA"), not a Lambda's. The database password, which can rotate on its own, lives in RDS's managed secret.
  for_each                = local.roles
  name                    = "${var.name}/${each.key}"
  description             = "Rookery ${each.key}: secret environment and files, read at each boot"
  kms_key_id              = var.kms_key_arn
  recovery_window_in_days = 30
  tags                    = var.tags
}

data "aws_iam_policy_document" "monitoring_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["monitoring.rds.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "rds_monitoring" {
  name               = "${var.name}-rds-monitoring"
  assume_role_policy = data.aws_iam_policy_document.monitoring_assume.json
  tags               = var.tags
}

data "aws_partition" "current" {}

resource "aws_iam_role_policy_attachment" "rds_monitoring" {
  role       = aws_iam_role.rds_monitoring.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole"
}
