/**
 * Runs a single-node KRaft broker for the tests in one JVM: formats the
 * storage named by the properties file (as `kafka-storage format` would,
 * through kafka.tools.StorageTool), then runs kafka.Kafka on it. Its life is
 * tied to the test runner's: when standard input closes (the runner stopped
 * or died) the JVM exits, so no broker outlives the run.
 * Arguments: SERVER_PROPERTIES CLUSTER_ID
 */
public class KafkaBroker {
  public static void main(String[] args) throws Exception {
    String properties = args[0];
    String clusterId = args[1];
    Thread lifeline = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // nothing is sent; only the end of the stream matters
        }
      } catch (java.io.IOException ignored) {
        // a broken pipe is an end too
      }
      System.exit(0);
    }, "test-runner-lifeline");
    lifeline.setDaemon(true);
    lifeline.start();

    String[] format = {"format", "--cluster-id", clusterId, "--config", properties, "--ignore-formatted"};
    int formatted = kafka.tools.StorageTool.execute(format, System.out);
    if (formatted != 0) {
      System.err.println("kafka-storage format exited with " + formatted);
      System.exit(formatted);
    }
    kafka.Kafka.main(new String[] {properties});
  }
}
