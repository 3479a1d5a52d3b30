package io.flowscope.ring;

/**
 * Receives the records of a ring, one at a time, through a reused flyweight. The view is valid only
 * during the call: copy what you keep (or call {@link RecordView#toEvent()}).
 */
@FunctionalInterface
public interface RecordHandler {
    void onRecord(RecordView record);
}
