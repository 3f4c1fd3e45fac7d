"""Evidence made or converted here, written as evidence bundles: the calibrated simulator
(`ingestion.sources.simulator`) and the converters of public releases (`dsg_release`,
`tiif_release`, named by `releases`; what they share is `release_common`)."""
