package io.flowscope.dashboards.model;

/**
 * A datasource by plugin type and uid. The dashboards name their datasource through the dashboard's
 * {@code datasource} variable ({@link #VARIABLE_UID}), so a user picks any datasource of that type; the
 * variable's default is the provisioned one.
 */
public record DatasourceRef(String type, String uid) {
    public static final String INFLUXDB = "influxdb";
    public static final String PROMETHEUS = "prometheus";
    /** The uid every panel, target, variable and annotation gives: the dashboard's datasource variable. */
    public static final String VARIABLE_UID = "${datasource}";

    public static DatasourceRef influxdb(final String uid) {
        return new DatasourceRef(INFLUXDB, uid);
    }

    public static DatasourceRef prometheus(final String uid) {
        return new DatasourceRef(PROMETHEUS, uid);
    }
}
