import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * Serves the MongoDB wire protocol from mongo-java-server's in-memory backend
 * on HOST:PORT (PORT 0 picks a free one) for the tests. Prints
 * "listening <host>:<port>" once it accepts connections, and exits when
 * standard input closes (the test runner stopped or died).
 */
public class MongoWireServer {
  /**
   * The library's newest preset (MONGO_5_0) announces wire version 8, below
   * the 9 (MongoDB 4.4) that the Node.js driver 7 requires; announce 4.4.
   */
  enum Announced implements MongoVersion {
    MONGO_4_4;

    @Override
    public List<Integer> getVersionArray() {
      return List.of(4, 4, 0);
    }

    @Override
    public int getWireVersion() {
      return 9;
    }
  }

  public static void main(String[] args) throws Exception {
    String host = args.length > 0 ? args[0] : "127.0.0.1";
    int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
    MongoServer server = new MongoServer(new MemoryBackend().version(Announced.MONGO_4_4));
    server.bind(host, port);
    InetSocketAddress address = server.getLocalAddress();
    System.out.println("listening " + address.getHostString() + ":" + address.getPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // nothing is sent; only the end of the stream matters
    }
    server.shutdownNow();
    System.exit(0);
  }
}
