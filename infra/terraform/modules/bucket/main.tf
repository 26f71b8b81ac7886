# One S3 bucket as Rookery keeps every bucket (the settings terraform-aws-modules/s3-bucket names):
# versioned, public access blocked, owner-enforced, encrypted by default, TLS-only, access-logged,
# with a lifecycle. Used three times by the storage module.

data "aws_caller_identity" "current" {}

resource "aws_s3_bucket" "this" {
  #checkov:skip=CKV_AWS_144:One region by design (docs/operations.md); a second region's copy of backups is an operator's choice (AWS Backup or replication), not configured here.
  #checkov:skip=CKV2_AWS_62:Nothing consumes object events: backups are listed by the worker, releases read at boot, logs by people.
  #checkov:skip=CKV_AWS_18:Every bucket but the logs bucket logs to it (access_log_bucket; the storage module's vitest test checks both); the logs bucket does not log into itself.
  #checkov:skip=CKV_AWS_145:SSE-KMS wherever the storage module gives a key (backups, releases; checked by its vitest test); the logs bucket is SSE-S3 because load balancers deliver access logs with nothing else.
  bucket = var.bucket
  tags   = var.tags
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

resource "aws_s3_bucket_versioning" "this" {
  bucket = aws_s3_bucket.this.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "this" {
  bucket = aws_s3_bucket.this.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_logging" "this" {
  count         = var.access_log_bucket == null ? 0 : 1
  bucket        = aws_s3_bucket.this.id
  target_bucket = var.access_log_bucket
  target_prefix = "s3/${var.bucket}/"
}

data "aws_iam_policy_document" "this" {
  statement {
    sid       = "TlsOnly"
    effect    = "Deny"
    actions   = ["s3:*"]
    resources = [aws_s3_bucket.this.arn, "${aws_s3_bucket.this.arn}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }

  dynamic "statement" {
    for_each = var.require_kms_key ? [var.kms_key_arn] : []
    content {
      sid       = "OnlyTheBucketKey"
      effect    = "Deny"
      actions   = ["s3:PutObject"]
      resources = ["${aws_s3_bucket.this.arn}/*"]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
      condition {
        test     = "StringNotEqualsIfExists"
        variable = "s3:x-amz-server-side-encryption-aws-kms-key-id"
        values   = [statement.value]
      }
    }
  }

  dynamic "statement" {
    for_each = var.log_delivery ? [1] : []
    content {
      sid       = "LogDelivery"
      actions   = ["s3:PutObject"]
      resources = ["${aws_s3_bucket.this.arn}/*"]
      principals {
        type        = "Service"
        identifiers = ["logging.s3.amazonaws.com", "delivery.logs.amazonaws.com"]
      }
      condition {
        test     = "StringEquals"
        variable = "aws:SourceAccount"
        values   = [data.aws_caller_identity.current.account_id]
      }
    }
  }
}

resource "aws_s3_bucket_policy" "this" {
  bucket     = aws_s3_bucket.this.id
  policy     = data.aws_iam_policy_document.this.json
  depends_on = [aws_s3_bucket_public_access_block.this]
}

resource "aws_s3_bucket_lifecycle_configuration" "this" {
  bucket = aws_s3_bucket.this.id

  # One rule for everything: abandoned uploads, old versions, and the bucket's own archive and expiry.
  rule {
    id     = "housekeeping"
    status = "Enabled"
    filter {}

    abort_incomplete_multipart_upload {
      days_after_initiation = 7
    }

    noncurrent_version_expiration {
      noncurrent_days = var.noncurrent_version_days
    }

    dynamic "transition" {
      for_each = var.archive_after_days == null ? [] : [var.archive_after_days]
      content {
        days          = transition.value
        storage_class = "GLACIER_IR"
      }
    }

    dynamic "expiration" {
      for_each = var.expire_after_days == null ? [] : [var.expire_after_days]
      content {
        days = expiration.value
      }
    }
  }

  depends_on = [aws_s3_bucket_versioning.this]
}
