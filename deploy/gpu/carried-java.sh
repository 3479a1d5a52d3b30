# Sourced by the GPU scripts that run the collector service from .carry/ (deploy/gpu/make-carry.sh --collector):
# unpacks the carried Java runtime into the folder $1 and sets JAVA and JFLAGS (the module openings Chronicle Queue
# needs, and its analytics and announcer off: no outside host may be contacted).
carried_java() {
  tar xzf .carry/jre.tgz -C "$1" || return 1
  JAVA=$(ls -d "$1"/*/bin/java | head -1)
  JFLAGS=(--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
    --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
    -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true)
}
