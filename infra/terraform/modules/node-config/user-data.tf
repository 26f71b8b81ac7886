# The instance's user data on AWS (cloud-init): installs Node 24 and the release from the release
# bucket (checked against their SHA-256), writes the rendered files, fetches the secrets at each
# boot, prepares the disks of the role, and starts the unit. It carries no secret: tests/user-data.

locals {
  boot_files = var.boot == null ? {} : merge(
    {
      "/usr/local/lib/rookery/fetch-secrets" = templatefile("${path.module}/fetch-secrets.sh.tftpl", {
        secrets_env_file   = var.secrets_env_file
        region             = var.boot.region
        secret_id          = var.boot.secret_id
        database_secret_id = var.boot.database_secret_id
        database_endpoint  = var.boot.database_endpoint
        database_name      = var.boot.database_name
        data_dir           = var.data_dir
        user               = var.user
        required_files     = local.secret_files[var.role]
      })
    },
    var.role != "host" ? {} : {
      "/usr/local/lib/rookery/prepare-nvme" = templatefile("${path.module}/prepare-nvme.sh.tftpl", {
        data_dir = var.data_dir
        user     = var.user
      })
      "/usr/local/lib/rookery/drain-on-terminate" = templatefile("${path.module}/drain-on-terminate.sh.tftpl", {
        region                 = var.boot.region
        lifecycle_hook_name    = coalesce(var.boot.lifecycle_hook_name, "rookery-drain")
        autoscaling_group_name = coalesce(var.boot.autoscaling_group_name, "unset")
        install_dir            = var.install_dir
        env_file               = local.env_file_path
        secrets_env_file       = var.secrets_env_file
        instance_env_file      = var.instance_env_file
        user                   = var.user
        node_binary            = var.node_binary
      })
    },
  )

  secrets_unit = <<-EOT
    [Unit]
    Description=Rookery secrets from Secrets Manager
    Wants=network-online.target
    After=network-online.target

    [Service]
    Type=oneshot
    RemainAfterExit=true
    ExecStart=/usr/local/lib/rookery/fetch-secrets
  EOT

  drain_unit = <<-EOT
    [Unit]
    Description=Rookery host: drain on the auto-scaling group's termination hook
    After=rookery-host.service

    [Service]
    Type=simple
    ExecStart=/usr/local/lib/rookery/drain-on-terminate
    Restart=on-failure

    [Install]
    WantedBy=multi-user.target
  EOT

  mirror_mount = var.boot == null || var.role == "gateway" || try(var.boot.mirror_file_system_id, null) == null ? null : join(" ", [
    "${var.boot.mirror_file_system_id}:/", var.mirror_dir, "efs",
    join(",", concat(
      ["_netdev", "noresvport", "tls", "iam"],
      try(var.boot.mirror_access_point_id, null) == null ? [] : ["accesspoint=${var.boot.mirror_access_point_id}"],
      var.role == "worker" ? ["ro"] : [],
    )),
    "0", "0",
  ])

  # The host's id is the instance id; gateways reach its relay at the instance's private address, which
  # its relay certificate names (both known at boot only).
  instance_script = <<-EOT
    token=$(curl -sf -X PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 60')
    md() { curl -sf -H "X-aws-ec2-metadata-token: $token" "http://169.254.169.254/latest/meta-data/$1"; }
    install -d -m 0755 "$(dirname '${var.instance_env_file}')"
    ip=$(md local-ipv4)
    printf 'ROOKERY_HOST_ID=%s\nROOKERY_HOST_ADVERTISE_URL=https://%s:${var.relay_port}\nROOKERY_HOST_RELAY_NAMES=%s\n' "$(md instance-id)" "$ip" "$ip" >'${var.instance_env_file}'
  EOT

  cloud_config = var.boot == null ? null : {
    packages = concat(["jq", "amazon-efs-utils"], var.role == "host" ? ["mdadm", "xfsprogs"] : [])
    write_files = concat(
      [
        { path = local.env_file_path, permissions = "0644", content = local.env_file },
        { path = "/etc/systemd/system/${local.unit_name}", permissions = "0644", content = local.unit },
        { path = "/etc/systemd/system/rookery-secrets.service", permissions = "0644", content = local.secrets_unit },
      ],
      [for p, c in local.boot_files : { path = p, permissions = "0755", content = c }],
      var.role == "host" ? [{ path = "/etc/systemd/system/rookery-drain.service", permissions = "0644", content = local.drain_unit }] : [],
    )
    runcmd = concat(
      [
        ["useradd", "--system", "--home-dir", var.data_dir, "--shell", "/sbin/nologin", var.user],
        ["install", "-d", "-o", var.user, "-g", var.user, "-m", "0750", var.data_dir],
        ["bash", "-c", "set -euo pipefail; aws s3 cp --region ${var.boot.region} '${var.boot.node_url}' /tmp/node.tar.xz && echo '${var.boot.node_sha256}  /tmp/node.tar.xz' | sha256sum -c - && install -d ${dirname(dirname(var.node_binary))} && tar -xJf /tmp/node.tar.xz --strip-components=1 -C ${dirname(dirname(var.node_binary))}"],
        ["bash", "-c", "set -euo pipefail; aws s3 cp --region ${var.boot.region} '${var.boot.release_url}' /tmp/release.tar.gz && echo '${var.boot.release_sha256}  /tmp/release.tar.gz' | sha256sum -c - && install -d ${var.install_dir} && tar -xzf /tmp/release.tar.gz -C ${var.install_dir}"],
        ["bash", "-c", "set -euo pipefail; install -d /etc/pki/rds && aws s3 cp --region ${var.boot.region} '${replace(var.boot.release_url, "/[^/]+$/", "rds-global-bundle.pem")}' /etc/pki/rds/global-bundle.pem"],
      ],
      var.role == "host" ? [["/usr/local/lib/rookery/prepare-nvme"], ["bash", "-c", local.instance_script]] : [],
      local.mirror_mount == null ? [] : [
        ["install", "-d", var.mirror_dir],
        ["bash", "-c", "echo '${local.mirror_mount}' >>/etc/fstab && mount ${var.mirror_dir}"],
      ],
      [
        ["systemctl", "daemon-reload"],
        ["systemctl", "enable", "--now", local.unit_name],
      ],
      var.role == "host" ? [["systemctl", "enable", "--now", "rookery-drain.service"]] : [],
    )
  }

  user_data = local.cloud_config == null ? null : "#cloud-config\n${yamlencode(local.cloud_config)}"
}
