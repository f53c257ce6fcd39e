"""What tests compare of a RunConfig's cluster properties, with 2.15's values."""


def cluster_properties(config):
    """The task and cluster facts a RunConfig reads from TF_CONFIG, as a tuple."""
    return (
        config.task_type,
        config.task_id,
        config.master,
        config.num_worker_replicas,
        config.num_ps_replicas,
        config.is_chief,
        config.global_id_in_cluster,
    )
