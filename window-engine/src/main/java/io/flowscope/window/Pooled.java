package io.flowscope.window;

/** Base of the objects held by a {@link Pool}: where the object sits in the pool's dense active list. */
abstract class Pooled {
    int activeIndex = -1;
}
