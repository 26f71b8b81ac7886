# A small fleet on one machine, rendered through the same node-config module the AWS user data uses:
# `tofu apply` here creates nothing but outputs (no provider). The local-fleet test writes these
# files, starts each node from its env file as systemd would, and drives traffic through it.

terraform {
  required_version = ">= 1.9.0"
}

locals {
  host_ids = [for i in range(var.hosts) : "host-${i + 1}"]
  # One port block per use: hosts' internal API base+1.., gateways base+101.., gateways' health checks
  # base+151.., the worker base+201, hosts' relays (mutual TLS, what gateways reach) base+301.., gateways'
  # RavenDB TCP listeners base+401..
  host_port    = { for i, id in local.host_ids : id => var.base_port + 1 + i }
  relay_port   = { for i, id in local.host_ids : id => var.base_port + 301 + i }
  gateway_port = { for i in range(var.gateways) : "gateway-${i + 1}" => var.base_port + 101 + i }
  health_port  = { for i in range(var.gateways) : "gateway-${i + 1}" => var.base_port + 151 + i }
  raven_port   = { for i in range(var.gateways) : "gateway-${i + 1}" => var.base_port + 401 + i }
}

module "sizing" {
  source      = "../../modules/sizing"
  environment = "local"
  tenants     = var.tenants
}

module "host" {
  source   = "../../modules/node-config"
  for_each = local.host_port

  role              = "host"
  install_dir       = var.repo_dir
  node_binary       = var.node_binary
  listen_address    = "127.0.0.1"
  port              = each.value
  data_dir          = "${var.root_dir}/${each.key}/data"
  mirror_dir        = "${var.root_dir}/mirror"
  config_dir        = "${var.root_dir}/${each.key}/etc"
  secrets_env_file  = "${var.root_dir}/secrets.env"
  instance_env_file = "${var.root_dir}/${each.key}/etc/instance.env"
  host_capacity     = module.sizing.host.capacity
  lease_ttl_ms      = var.lease_ttl_ms
  relay_port        = local.relay_port[each.key]
  hosts             = [{ id = each.key, advertise_url = "https://127.0.0.1:${local.relay_port[each.key]}", relay_name = "127.0.0.1" }]
  settings = {
    ROOKERY_MIRROR_MODE     = "sync"
    ROOKERY_SPARE_PROCESSES = "0"
  }
}

module "gateway" {
  source   = "../../modules/node-config"
  for_each = local.gateway_port

  role             = "gateway"
  install_dir      = var.repo_dir
  node_binary      = var.node_binary
  listen_address   = "127.0.0.1"
  port             = each.value
  health_port      = local.health_port[each.key]
  raven_tcp_port   = local.raven_port[each.key]
  data_dir         = "${var.root_dir}/${each.key}/data"
  config_dir       = "${var.root_dir}/${each.key}/etc"
  secrets_env_file = "${var.root_dir}/secrets.env"
  server_names     = ["localhost", "127.0.0.1"]
}

module "worker" {
  source = "../../modules/node-config"

  role             = "worker"
  install_dir      = var.repo_dir
  node_binary      = var.node_binary
  listen_address   = "127.0.0.1"
  port             = var.base_port + 201
  data_dir         = "${var.root_dir}/worker-1/data"
  mirror_dir       = "${var.root_dir}/mirror"
  config_dir       = "${var.root_dir}/worker-1/etc"
  secrets_env_file = "${var.root_dir}/secrets.env"
  # Sweeps and database jobs go through one host's internal API (the worker takes one host URL).
  host_url = "http://127.0.0.1:${local.host_port[local.host_ids[0]]}"
}
