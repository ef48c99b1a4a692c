package capbench.web;

/** A client mistake; its message is the one-line reason sent back with status 400. */
public class BadRequestException extends Exception {

    public BadRequestException(String reason) {
        super(reason);
    }
}
