package io.flowscope.dashboards.model;

/** A panel's place on Grafana's 24-column grid: height in rows, width in columns, top-left corner. */
public record GridPos(int h, int w, int x, int y) {
    public static final int COLUMNS = 24;

    public boolean overlaps(final GridPos o) {
        return x < o.x + o.w && o.x < x + w && y < o.y + o.h && o.y < y + h;
    }
}
