# The IAM policy documents of the three node roles, built with jsonencode (no provider), so that
# `tofu test` proves least privilege here: no wildcard action, no "*" resource except describes,
# only workers write backups; gateways and hosts read nothing from S3 but the release they boot.

locals {
  # What every node does: read its own secrets at boot, ship its logs, push its metrics.
  common = {
    for role in ["gateway", "host", "worker"] : role => [
      {
        Sid      = "ReadOwnSecrets"
        Effect   = "Allow"
        Action   = ["secretsmanager:GetSecretValue"]
        Resource = lookup(var.secret_arns, role, [])
      },
      {
        Sid       = "DecryptSecretsThroughSecretsManager"
        Effect    = "Allow"
        Action    = ["kms:Decrypt"]
        Resource  = [var.kms_key_arns.secrets]
        Condition = { StringLike = { "kms:ViaService" = "secretsmanager.*.amazonaws.com" } }
      },
      {
        Sid      = "ShipLogs"
        Effect   = "Allow"
        Action   = ["logs:CreateLogStream", "logs:PutLogEvents"]
        Resource = ["${var.log_group_arns[role]}:*"]
      },
      {
        # Boot only: Node 24 and the release, read-only, from the releases/ prefix (no listing).
        Sid      = "ReadReleases"
        Effect   = "Allow"
        Action   = ["s3:GetObject"]
        Resource = ["${var.bucket_arns.releases}/releases/*"]
      },
      {
        Sid      = "PushMetrics"
        Effect   = "Allow"
        Action   = ["aps:RemoteWrite"]
        Resource = [var.prometheus_workspace_arn]
      },
    ]
  }

  own = {
    gateway = []
    host = [
      {
        Sid       = "MountAndWriteTheMirror"
        Effect    = "Allow"
        Action    = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
        Resource  = [var.mirror_file_system_arn]
        Condition = { Bool = { "elasticfilesystem:AccessedViaMountTarget" = "true" } }
      },
      {
        # The termination hook: a host drains its tenants (`rookery host drain`), then lets the group go on.
        Sid      = "CompleteOwnTerminationHook"
        Effect   = "Allow"
        Action   = ["autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"]
        Resource = [var.host_autoscaling_group_arn]
      },
    ]
    worker = [
      {
        # Read-only: backups and index builds read the mirror and never write it.
        Sid       = "MountTheMirrorReadOnly"
        Effect    = "Allow"
        Action    = ["elasticfilesystem:ClientMount"]
        Resource  = [var.mirror_file_system_arn]
        Condition = { Bool = { "elasticfilesystem:AccessedViaMountTarget" = "true" } }
      },
      {
        Sid      = "ListBackups"
        Effect   = "Allow"
        Action   = ["s3:ListBucket"]
        Resource = [var.bucket_arns.backups]
      },
      {
        # Written by backups, read by restores, deleted when a chain is pruned (services/worker/src/storage/s3-storage.ts).
        Sid      = "ReadWriteBackups"
        Effect   = "Allow"
        Action   = ["s3:PutObject", "s3:GetObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
        Resource = ["${var.bucket_arns.backups}/*"]
      },
      {
        Sid      = "EncryptBackups"
        Effect   = "Allow"
        Action   = ["kms:GenerateDataKey", "kms:Decrypt"]
        Resource = [var.kms_key_arns.backups]
      },
    ]
  }

  documents = {
    for role in ["gateway", "host", "worker"] : role => {
      Version = "2012-10-17"
      # Statements with no resource (a role without secrets) are left out rather than written empty.
      Statement = [for s in concat(local.common[role], local.own[role]) : s if length(s.Resource) > 0]
    }
  }

  assume_role = {
    Version = "2012-10-17"
    Statement = [{
      Sid       = "Ec2Instances"
      Effect    = "Allow"
      Action    = ["sts:AssumeRole"]
      Principal = { Service = "ec2.amazonaws.com" }
    }]
  }
}
