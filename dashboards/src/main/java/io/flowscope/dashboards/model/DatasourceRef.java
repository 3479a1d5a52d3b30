package io.flowscope.dashboards.model;

/** A reference to a provisioned Grafana datasource by type and fixed uid. */
public record DatasourceRef(String type, String uid)
{
    public static DatasourceRef influxdb(final String uid)
    {
        return new DatasourceRef("influxdb", uid);
    }
}
