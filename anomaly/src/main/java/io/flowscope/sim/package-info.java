/**
 * The cluster simulator (issue #4): N nodes × G GPUs running ring and tree collectives and send/recv over
 * several channels, emitting the same typed events as the ring through {@code io.flowscope.api.input.TelemetryListener},
 * with injectable faults and labelled scenarios. Entry points: {@code ClusterSimulator} and {@code Scenario}.
 */
package io.flowscope.sim;
