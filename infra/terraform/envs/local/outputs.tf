output "nodes" {
  description = "Per node: its role, the files to write (path → content), its unit (what systemd would run), the files it reads secrets and instance settings from, and the secret files its secrets fetcher writes (path → name in the secret)."
  value = merge(
    {
      for id, m in module.host : id => {
        role              = "host"
        files             = merge({ (m.env_file.path) = m.env_file.content }, { (m.instance_env_file) = m.instance_env_files["host-${id}"] })
        env_file          = m.env_file.path
        instance_env_file = m.instance_env_file
        secrets_env_file  = m.secrets_env_file
        secret_variables  = m.secret_variables
        secret_files      = m.secret_files
        unit              = m.unit.content
      }
    },
    {
      for id, m in module.gateway : id => {
        role              = "gateway"
        files             = { (m.env_file.path) = m.env_file.content }
        env_file          = m.env_file.path
        instance_env_file = null
        secrets_env_file  = m.secrets_env_file
        secret_variables  = m.secret_variables
        secret_files      = m.secret_files
        unit              = m.unit.content
      }
    },
    {
      "worker-1" = {
        role              = "worker"
        files             = { (module.worker.env_file.path) = module.worker.env_file.content }
        env_file          = module.worker.env_file.path
        instance_env_file = null
        secrets_env_file  = module.worker.secrets_env_file
        secret_variables  = module.worker.secret_variables
        secret_files      = module.worker.secret_files
        unit              = module.worker.unit.content
      }
    },
  )
}
