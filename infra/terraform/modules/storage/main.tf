# Keys and buckets. Two KMS keys: backups (only workers use it) and platform (secrets, logs, volumes,
# the mirror, the database). Three buckets (modules/bucket: versioned, public access blocked, TLS-only,
# owner-enforced, lifecycle): backups (SSE-KMS with the backup key only), releases (what nodes boot:
# Node 24 and the release artifact), logs (access logs of the other two and of the load balancer,
# SSE-S3 because the load balancer writes with nothing else).

data "aws_caller_identity" "current" {}
data "aws_region" "current" {}
data "aws_partition" "current" {}

locals {
  account = data.aws_caller_identity.current.account_id
  root    = "arn:${data.aws_partition.current.partition}:iam::${local.account}:root"
}

# Every key's policy starts here: the account administers its own key (AWS's default key policy).
# The backups key has nothing more (the workers' role grants them its use); the platform key adds the
# services that encrypt with it.
data "aws_iam_policy_document" "account_administers" {
  #checkov:skip=CKV_AWS_111:A key policy's "*" resource is the key itself; the account's root administers it (AWS's default key policy).
  #checkov:skip=CKV_AWS_356:A key policy's "*" resource is the key itself.
  #checkov:skip=CKV_AWS_109:The account root administering its own key is AWS's default key policy; without it the key could become unmanageable.
  statement {
    sid       = "AccountAdministers"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = [local.root]
    }
  }
}

data "aws_iam_policy_document" "platform_key" {
  #checkov:skip=CKV_AWS_111:A key policy's "*" resource is the key itself; each service statement is narrowed by its principal (and, for logs, the encryption context).
  #checkov:skip=CKV_AWS_356:A key policy's "*" resource is the key itself.
  #checkov:skip=CKV_AWS_109:The account root administering its own key (from account_administers) is AWS's default key policy; without it the key could become unmanageable.
  source_policy_documents = [data.aws_iam_policy_document.account_administers.json]

  # Log groups (the nodes', flow logs) are encrypted with this key.
  statement {
    sid       = "CloudWatchLogs"
    actions   = ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${data.aws_region.current.name}.amazonaws.com"]
    }
    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:${data.aws_partition.current.partition}:logs:${data.aws_region.current.name}:${local.account}:log-group:*"]
    }
  }

  # Auto Scaling launches instances whose root volumes are encrypted with this key.
  statement {
    sid       = "AutoScalingVolumes"
    actions   = ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey", "kms:CreateGrant"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${data.aws_partition.current.partition}:iam::${local.account}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling"]
    }
  }

  # The alarm topic is encrypted with this key; CloudWatch publishes to it.
  statement {
    sid       = "CloudWatchAlarms"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["cloudwatch.amazonaws.com"]
    }
  }
}

locals {
  kms_keys = {
    backups  = { purpose = "backups", policy = data.aws_iam_policy_document.account_administers.json }
    platform = { purpose = "secrets, logs, volumes, mirror, control store", policy = data.aws_iam_policy_document.platform_key.json }
  }
}

resource "aws_kms_key" "this" {
  for_each                = local.kms_keys
  description             = "${var.name}: ${each.value.purpose}"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy                  = each.value.policy
  tags                    = var.tags
}

resource "aws_kms_alias" "this" {
  for_each      = aws_kms_key.this
  name          = "alias/${var.name}-${each.key}"
  target_key_id = each.value.key_id
}

module "logs" {
  source            = "../bucket"
  bucket            = "${var.name}-logs-${local.account}"
  log_delivery      = true
  expire_after_days = var.log_retention_days
  tags              = merge(var.tags, { Purpose = "logs" })
}

module "backups" {
  source                  = "../bucket"
  bucket                  = "${var.name}-backups-${local.account}"
  kms_key_arn             = aws_kms_key.this["backups"].arn
  require_kms_key         = true
  access_log_bucket       = module.logs.id
  noncurrent_version_days = var.backup_retention_days
  archive_after_days      = var.backup_archive_after_days
  tags                    = merge(var.tags, { Purpose = "backups" })
}

module "releases" {
  source            = "../bucket"
  bucket            = "${var.name}-releases-${local.account}"
  kms_key_arn       = aws_kms_key.this["platform"].arn
  access_log_bucket = module.logs.id
  tags              = merge(var.tags, { Purpose = "releases" })
}
